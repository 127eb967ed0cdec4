// `npm run reflow -- <file or folder>…`: shortens the lines over the line-length rule of
// eslint.config.mjs (100 columns) mechanically, touching only those lines and what holds them
// (issue 41, "tidy to zero"). For each line ESLint reports as too long:
//
// 1. a comment after code (`code // why`) moves to its own line above the code;
// 2. a comment over the width is re-wrapped: the words past the width move to the next line of
//    the same paragraph (`//` lines, `/** … */` and `/* … */` lines), cascading to the paragraph's
//    end, so the lines before it stay as they are. A paragraph ends at an empty comment line, a
//    list item (`-`, `*`, `1.`, `1)`), a JSDoc tag (`@param`), an indented line (code quoted in a
//    comment) and the comment's end; those are kept as written. A list item's continuation is
//    indented under its text;
// 3. code over the width is formatted by Prettier (.prettierrc), but only the smallest whole-line
//    piece of code that holds the line: a statement, an object's property, a class's or an
//    interface's member. The rest of the file is left as written, so that the diff shows what
//    was too long; functions grow only by the lines the long ones needed.
//
// What remains is what no formatter shortens: long strings and words (split them by hand, e.g.
// 'a ' + 'b'). Lines the config allows long (imports, SQL, test titles, operation summaries,
// URLs) are not reported by ESLint, and so not touched. Formatting a file whole with Prettier
// (`npx prettier --write <file>`) would also change every short line Prettier would write
// differently (member chains, objects); measured on this code base in issue 41, it turned 30
// functions over 50 lines into 106, where this turns them into fewer.
//
// Options: `--check` changes nothing and prints the long lines that remain, by file;
// `--prettier` formats long code in Prettier's style (step 3 below) rather than breaking it.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const width = 100

/** Lines (1-based) of `text` that ESLint's line-length rule reports in `file`. */
async function longLines(eslint, text, file) {
  const [result] = await eslint.lintText(text, { filePath: file })
  const lines = (result?.messages ?? []).filter((m) => m.ruleId === '@stylistic/max-len')
  return [...new Set(lines.map((m) => m.line))]
}

/** The program's AST (typescript-estree), with ranges, locations and comments. */
async function parse(text, file) {
  const { parse: parseTs } = await import('@typescript-eslint/typescript-estree')
  return parseTs(text, {
    range: true, loc: true, comment: true, tokens: true, filePath: file, jsx: false,
  })
}

const indentOf = (line) => /^\s*/.exec(line)[0]

// Lines eslint.config.mjs lets through whatever their length (SQL, an operation's summary or
// description, a test's title, …): a part of a broken line that is one of them fits.
const { default: eslintConfig } = await import(pathToFileURL(path.join(projectRoot,
  'eslint.config.mjs')).href)
const maxLen = eslintConfig.find((c) => c.rules?.['@stylistic/max-len'])
const allowedLong = new RegExp(maxLen.rules['@stylistic/max-len'][1].ignorePattern)
const fits = (part) => part.length <= width || allowedLong.test(part)

// 1. `code // comment` over the width: the comment goes on its own line above the code.
function moveTrailingComments(text, ast, long) {
  const lines = text.split('\n')
  const moves = []
  for (const c of ast.comments) {
    const line = c.loc.start.line
    if (c.type !== 'Line' || !long.includes(line)) continue
    const before = lines[line - 1].slice(0, c.loc.start.column)
    if (before.trim() === '' || before.trimEnd().length > width) continue
    moves.push({ line, code: before.trimEnd(), comment: lines[line - 1].slice(c.loc.start.column) })
  }
  for (const m of moves.reverse()) {
    const indent = indentOf(m.code)
    lines.splice(m.line - 1, 1, `${indent}${m.comment}`, m.code)
  }
  return { text: lines.join('\n'), changed: moves.length }
}

// A comment line's parts: `prefix` (indentation and `//`, ` *` or nothing, with the space
// after it) and `body`. `kind` tells which sort of comment line it is.
function commentLine(line, inBlock) {
  const slashes = /^(\s*\/\/+ ?)(.*)$/.exec(line)
  if (!inBlock && slashes) return { kind: '//', prefix: slashes[1], body: slashes[2] }
  const star = /^(\s*\*(?!\/) ?)(.*)$/.exec(line)
  if (inBlock && star) return { kind: '*', prefix: star[1], body: star[2] }
  if (inBlock) {
    const plain = /^(\s*)(.*)$/.exec(line)
    return { kind: 'plain', prefix: plain[1], body: plain[2] }
  }
  return undefined
}

const listItem = /^(?:[-*•]|\d+[.)]|\([a-z0-9]\))\s+/

// Whether a comment body begins a new paragraph (or is not prose to be re-wrapped).
function startsParagraph(body) {
  return body.trim() === '' || listItem.test(body) || /^\s/.test(body) || /^@\w/.test(body) ||
    /^(?:eslint|@ts-|prettier-ignore|```)/.test(body)
}

// Splits `body` (after `prefix`) so that the first part fits in the width: at the last space
// before the width, else at the first space after it (a word longer than the line stays whole).
function splitBody(prefix, body) {
  const room = width - prefix.length
  if (body.length <= room) return undefined
  let at = body.lastIndexOf(' ', room)
  while (at > 0 && body[at - 1] === ' ') at--
  if (at <= 0 || body.slice(0, at).trim() === '') {
    at = body.indexOf(' ', room)
    if (at < 0) return undefined
  }
  return [body.slice(0, at).trimEnd(), body.slice(at).trim()]
}

// The prefix a continuation of `first` takes: under a list item's text, or under a tag's.
function continuationPrefix(first) {
  const item = listItem.exec(first.body)
  const pad = item ? ' '.repeat(item[0].length) : ''
  return `${first.prefix}${pad}`
}

// 2. Comment lines over the width: the words past it move to the next line of the paragraph.
function rewrapComments(text, ast, long) {
  const lines = text.split('\n')
  const longSet = new Set(long)
  let changed = 0
  // Whole-line comments only, from the last to the first so that inserted lines shift nothing
  // still to be done.
  const comments = ast.comments.filter((c) => {
    const before = lines[c.loc.start.line - 1].slice(0, c.loc.start.column)
    return before.trim() === '' && (c.type === 'Block' || lines[c.loc.start.line - 1]
      .slice(c.loc.end.column).trim() === '')
  })
  const lineComments = comments.filter((c) => c.type === 'Line')
  const runs = []
  for (const c of lineComments) {
    const last = runs.at(-1)
    if (last && last.end === c.loc.start.line - 1 && last.column === c.loc.start.column) {
      last.end = c.loc.start.line
    } else {
      runs.push({ start: c.loc.start.line, end: c.loc.start.line, column: c.loc.start.column })
    }
  }
  const blocks = comments.filter((c) => c.type === 'Block').map((c) => ({
    start: c.loc.start.line, end: c.loc.end.line, block: true,
  }))
  const all = [...runs, ...blocks].sort((a, b) => b.start - a.start)
  for (const run of all) {
    let hasLong = false
    for (let l = run.start; l <= run.end; l++) if (longSet.has(l)) hasLong = true
    if (!hasLong) continue
    if (run.block && run.start === run.end) {
      changed += openOneLineBlock(lines, run.start - 1) ? 1 : 0
      continue
    }
    changed += rewrapRun(lines, run)
  }
  return { text: lines.join('\n'), changed }
}

// `/** text */` over the width: opened onto three lines, then re-wrapped.
function openOneLineBlock(lines, index) {
  const m = /^(\s*)(\/\*\*?)\s*(.*?)\s*\*\/\s*$/.exec(lines[index])
  if (!m) return false
  const [, indent, open, body] = m
  const prefix = `${indent} * `
  const wrapped = []
  let rest = body
  for (let parts = splitBody(prefix, rest); parts; parts = splitBody(prefix, rest)) {
    wrapped.push(`${prefix}${parts[0]}`)
    rest = parts[1]
  }
  wrapped.push(`${prefix}${rest}`)
  lines.splice(index, 1, `${indent}${open}`, ...wrapped, `${indent} */`)
  return true
}

// The comment line at `i` when it is prose over the width, to be re-wrapped.
function overlong(lines, i, run, end) {
  const block = Boolean(run.block)
  const first = block && i === run.start - 1
  if (first || (block && i === end - 1 && /^\s*\*\/\s*$/.test(lines[i]))) return undefined
  const here = commentLine(lines[i], block && i > run.start - 1)
  if (!here || lines[i].length <= width || here.kind === 'plain') return undefined
  if (/^\s/.test(here.body) || /^(?:eslint|@ts-|```)/.test(here.body)) return undefined
  return here
}

// The prefix of a continuation of line `i`: its paragraph's first line gives the indentation.
function paragraphPad(lines, i, run, here) {
  const block = Boolean(run.block)
  let head = i
  while (head > run.start - 1 + (block ? 1 : 0)) {
    const cur = commentLine(lines[head], block)
    if (!cur || startsParagraph(cur.body)) break
    head--
  }
  return continuationPrefix(commentLine(lines[head], block) ?? here)
}

// Whether the line after `i` continues its paragraph (then the overflow joins it).
function continues(lines, i, end, block, here, pad) {
  const next = i + 1 < end ? commentLine(lines[i + 1], block) : undefined
  if (!next || next.kind !== here.kind || next.body.trim() === '') return undefined
  if (listItem.test(next.body) || /^@\w/.test(next.body)) return undefined
  if ((block && /^\s*\*\//.test(lines[i + 1])) || next.prefix.length > pad.length) return undefined
  return /^\s{2,}/.test(lines[i + 1].slice(next.prefix.length)) ? undefined : next
}

// Re-wraps the long lines of one comment (lines run.start…run.end, 1-based), each overflow
// going to the next line of its paragraph or onto a new line.
function rewrapRun(lines, run) {
  let changed = 0
  const block = Boolean(run.block)
  let end = run.end
  for (let i = run.start - 1; i < end; i++) {
    const here = overlong(lines, i, run, end)
    const parts = here && splitBody(here.prefix, here.body)
    if (!parts) continue
    const pad = paragraphPad(lines, i, run, here)
    const last = block && i === end - 1 && /\*\/\s*$/.test(lines[i])
    const next = last ? undefined : continues(lines, i, end, block, here, pad)
    lines[i] = `${here.prefix}${parts[0]}`
    if (last) {
      // `… text */` on the last line: the overflow and the close go on lines of their own.
      const rest = parts[1].replace(/\s*\*\/\s*$/, '')
      lines.splice(i + 1, 0, `${pad}${rest}`, `${indentOf(here.prefix)} */`)
      end += 2
    } else if (next) {
      lines[i + 1] = `${pad}${parts[1]} ${next.body.trim()}`
    } else {
      lines.splice(i + 1, 0, `${pad}${parts[1]}`)
      end++
    }
    changed++
  }
  return changed
}

// Node types that can be formatted on their own: statements and declarations, an object's
// property, a class's member and an interface's or type literal's member.
const statementTypes = /(?:Statement|Declaration)$/
const memberTypes = new Set([
  'Property', 'SpreadElement', 'MethodDefinition', 'PropertyDefinition', 'TSPropertySignature',
  'TSMethodSignature', 'TSIndexSignature', 'TSAbstractMethodDefinition',
  'TSAbstractPropertyDefinition', 'AccessorProperty',
])

const exports = new Set(['ExportNamedDeclaration', 'ExportDefaultDeclaration'])

function statementKind(node, parent) {
  if (node.type === 'BlockStatement' || node.type === 'StaticBlock') return undefined
  if (exports.has(node.type)) return parent?.type === 'Program' ? 'top' : undefined
  if (!statementTypes.test(node.type) || node.type === 'VariableDeclarator') return undefined
  if (exports.has(parent?.type)) return undefined
  if (node.type === 'TSModuleDeclaration' || node.type === 'ImportDeclaration') return undefined
  return parent?.type === 'Program' ? 'top' : 'statement'
}

function unitKind(node, parent) {
  const statement = statementKind(node, parent)
  if (statement) return statement
  if (node.type === 'Property' || node.type === 'SpreadElement') {
    return parent?.type === 'ObjectExpression' ? 'property' : undefined
  }
  if (!memberTypes.has(node.type)) return undefined
  if (parent?.type === 'ClassBody') return 'class'
  if (parent?.type === 'TSInterfaceBody' || parent?.type === 'TSTypeLiteral') return 'interface'
  return undefined
}

// Every formattable unit of the AST with the line span it occupies.
function units(ast) {
  const found = []
  const visit = (node, parent) => {
    if (!node || typeof node.type !== 'string') return
    const kind = unitKind(node, parent)
    if (kind) found.push({ node, kind })
    for (const [key, value] of Object.entries(node)) {
      if (key === 'parent' || key === 'loc' || key === 'range') continue
      if (Array.isArray(value)) for (const v of value) visit(v, node)
      else if (value && typeof value === 'object' && typeof value.type === 'string') {
        visit(value, node)
      }
    }
  }
  visit(ast, undefined)
  return found
}

// The unit's text begins its first line and ends its last one (a `,` or `;` and a comment may
// follow it): then its lines can be replaced whole.
function wholeLines(unit, lines, comments) {
  const { start, end } = unit.node.loc
  if (lines[start.line - 1].slice(0, start.column).trim() !== '') return false
  const after = lines[end.line - 1].slice(end.column)
  const trailing = comments.find((c) => c.loc.start.line === end.line &&
    c.loc.start.column >= end.column)
  const rest = trailing ? after.slice(0, trailing.loc.start.column - end.column) : after
  return /^[,;]?\s*$/.test(rest)
}

const wrappers = {
  top: { before: '', after: '', depth: 0 },
  statement: { before: 'async function* tidy__() {\n  for (;;) {\n', after: '\n  }\n}', depth: 2 },
  property: { before: 'tidy__ = {\n', after: '\n}', depth: 1 },
  class: { before: 'class Tidy__ {\n', after: '\n}', depth: 1 },
  interface: { before: 'interface Tidy__ {\n', after: '\n}', depth: 1 },
}

// Offsets of `source` at which a line begins inside a template literal's text: those lines
// are the string's content, never re-indented.
async function templateLineStarts(source, file) {
  const { parse: parseTs } = await import('@typescript-eslint/typescript-estree')
  const ast = parseTs(source, { range: true, tokens: true, filePath: file, jsx: false })
  const inside = new Set()
  const templates = ast.tokens.filter((t) => t.type === 'Template')
  let offset = 0
  for (const [i, line] of source.split('\n').entries()) {
    if (templates.some((t) => t.range[0] < offset && offset < t.range[1])) inside.add(i)
    offset += line.length + 1
  }
  return inside
}

// Formats lines first…last (0-based) as a unit of `kind` with Prettier, at their indentation.
async function formatUnit(prettier, options, lines, first, last, kind, inTemplate) {
  const indent = indentOf(lines[first]).length
  const wrap = wrappers[kind]
  const body = lines.slice(first, last + 1).map((l, i) =>
    (inTemplate.has(first + i) ? l : l.slice(Math.min(indent, indentOf(l).length))))
  const source = `${wrap.before}${body.join('\n')}${wrap.after}\n`
  const printWidth = width - indent + wrap.depth * 2
  if (printWidth < 40) return undefined
  const formatted = await prettier.format(source, { ...options, printWidth })
  const verbatim = await templateLineStarts(formatted, options.filepath)
  let out = formatted.replace(/\n$/, '').split('\n').map((l, i) => ({ l, verbatim: verbatim.has(i) }))
  if (wrap.before) {
    const skip = wrap.before.split('\n').length - 1
    out = out.slice(skip, out.length - (wrap.after.split('\n').length - 1))
  }
  const pad = ' '.repeat(indent)
  return out.map(({ l, verbatim }) => {
    if (verbatim) return l
    return l === '' ? '' : `${pad}${l.slice(wrap.depth * 2)}`
  })
}

// 3. Code over the width: each long line's smallest whole-line unit, formatted by Prettier.
async function reflowCode(text, ast, long, file) {
  const prettier = await import('prettier')
  const options = { ...(await prettier.resolveConfig(file)), filepath: file }
  const lines = text.split('\n')
  const inTemplate = await templateLineStarts(text, file)
  // A line that begins inside a template literal is a string's content: split it by hand.
  const code = long.filter((line) => !inTemplate.has(line - 1))
  let changed = 0
  for (const span of spansOf(ast, lines, code).reverse()) {
    // The smallest unit Prettier can format on its own (a statement Prettier cannot read
    // outside its context, e.g. `super(…)`, goes to the unit that holds it).
    for (const unit of span.holding) {
      const done = await formatInPlace(prettier, options, lines, unit, inTemplate)
      if (done === 'next') continue
      if (done) changed++
      break
    }
  }
  return { text: lines.join('\n'), changed }
}

const lineSpan = (u) => ({ first: u.node.loc.start.line - 1, last: u.node.loc.end.line - 1 })
const size = (u) => u.node.range[1] - u.node.range[0]

// For each long line the units that hold it, smallest first; outer units win over the units
// they hold, so that each span is formatted once.
function spansOf(ast, lines, long) {
  const all = units(ast).filter((u) => wholeLines(u, lines, ast.comments))
  const spans = []
  for (const line of long) {
    const holding = all.filter((u) => u.node.loc.start.line <= line && u.node.loc.end.line >= line)
    holding.sort((a, b) => size(a) - size(b))
    if (holding.length > 0) spans.push({ ...lineSpan(holding[0]), holding })
  }
  spans.sort((a, b) => a.first - b.first || b.last - a.last)
  const merged = []
  for (const s of spans) {
    const outer = merged.at(-1)
    if (outer && s.first >= outer.first && s.last <= outer.last) continue
    if (outer && s.first <= outer.last) {
      // Overlapping without one holding the other: take a unit that holds both.
      const both = s.holding.find((u) => lineSpan(u).first <= outer.first &&
        lineSpan(u).last >= s.last)
      if (!both) continue
      merged.pop()
      merged.push({ ...lineSpan(both), holding: [both] })
      continue
    }
    merged.push(s)
  }
  return merged
}

// Formats one unit's lines in place: true when they changed, false when left as they were,
// 'next' when Prettier cannot read the unit alone (the unit that holds it is tried).
async function formatInPlace(prettier, options, lines, unit, inTemplate) {
  const { first, last } = lineSpan(unit)
  let out
  try {
    out = await formatUnit(prettier, options, lines, first, last, unit.kind, inTemplate)
  } catch {
    return 'next'
  }
  if (!out) return 'next'
  if (out.join('\n') === lines.slice(first, last + 1).join('\n')) return false
  const after = [...lines.slice(0, first), ...out, ...lines.slice(last + 1)]
  // Whatever Prettier wrote must read back as a program (else the unit is left as it was).
  try {
    await parse(after.join('\n'), options.filepath)
  } catch {
    return false
  }
  lines.splice(first, last - first + 1, ...out)
  return true
}

// 3. Code over the width, by default: the line is broken where the code allows it (after a
// `,`, an opening bracket, an `=` or `=>`; before a binary or logical operator, a `?`/`:` of a
// conditional, a `.` of a member chain), at the shallowest bracket depth that leaves a
// substantial first part, and continues two columns in (four when it opens a block, so that
// the block's body stands apart). A line of 100 to 200 columns becomes two or three lines, where
// Prettier's style (one argument, element or property a line) makes it five to ten: measured
// in issue 41, that turned 30 functions over 50 lines into 97 where this makes about 43.

// Offsets where a line may break, from the AST: `after` a token's end, `before` a token's start.
function breakPoints(ast) {
  const tokens = ast.tokens
  const points = {
    after: new Set(),
    before: new Set(),
    // After an `=`: only on the line's own level (not a parameter's default value).
    assign: new Set(),
    // Breaks inside what binds tighter (a comparison, a sum, a member chain, an arrow's body)
    // count as one bracket deeper than a break at a `&&`, `||`, `??`, `,` or conditional.
    tight: new Set(),
    tokens,
    tokenAt: new Map(tokens.map((t, i) => [t.range[0], i])),
    firstTokenIn: (from, to, value) => tokens.find((t) => t.range[0] >= from &&
      t.range[1] <= to && t.value === value),
  }
  const visit = (node) => {
    if (!node || typeof node.type !== 'string') return
    nodeBreaks(node, points)
    for (const [key, value] of Object.entries(node)) {
      if (key === 'parent') continue
      if (Array.isArray(value)) value.forEach(visit)
      else if (value && typeof value.type === 'string') visit(value)
    }
  }
  visit(ast)
  for (const t of tokens) {
    if (t.type !== 'Punctuator') continue
    if (t.value === ',' || t.value === '(' || t.value === ';') points.after.add(t.range[1])
    if (/^(?:[-+*/%&|^]|\*\*|<<|>>>?|&&|\|\||\?\?)?=$/.test(t.value)) points.assign.add(t.range[1])
  }
  return points
}

// Brackets after which a line may break: an object's, an array's (not a computed member's).
const braces = new Set(['ObjectExpression', 'ObjectPattern', 'TSTypeLiteral',
  'TSInterfaceBody', 'ImportDeclaration', 'ExportNamedDeclaration', 'TSEnumDeclaration'])
const arrays = new Set(['ArrayExpression', 'ArrayPattern', 'TSTupleType'])

// A member chain breaks before a `.` that follows a call (`…)\n  .then(…)`).
function memberBreak(node, { before, tight, tokens, tokenAt }) {
  if (node.type !== 'MemberExpression' || node.computed) return
  if (node.object.type !== 'CallExpression') return
  const dot = tokens[tokenAt.get(node.property.range[0]) - 1]
  if (dot && (dot.value === '.' || dot.value === '?.')) {
    before.add(dot.range[0])
    tight.add(dot.range[0])
  }
}

// A union type breaks before each `|` (`'a' | 'b'`).
function unionBreaks(node, { before, tokens, tokenAt }) {
  if (node.type !== 'TSUnionType') return
  for (const type of node.types.slice(1)) {
    const bar = tokens[tokenAt.get(type.range[0]) - 1]
    if (bar?.value === '|') before.add(bar.range[0])
  }
}

// The break points one node of the AST gives (its own tokens, not its children's).
function nodeBreaks(node, points) {
  const { after, before, tight, firstTokenIn } = points
  const bracket = braces.has(node.type) ? '{' : arrays.has(node.type) ? '[' : undefined
  const open = bracket && firstTokenIn(node.range[0], node.range[1], bracket)
  if (open) after.add(open.range[1])
  if (node.type === 'BinaryExpression' || node.type === 'LogicalExpression') {
    const op = firstTokenIn(node.left.range[1], node.right.range[0], node.operator)
    if (op) before.add(op.range[0])
    if (op && node.type === 'BinaryExpression') tight.add(op.range[0])
  }
  memberBreak(node, points)
  unionBreaks(node, points)
  if (node.type === 'ConditionalExpression') {
    const q = firstTokenIn(node.test.range[1], node.consequent.range[0], '?')
    const c = firstTokenIn(node.consequent.range[1], node.alternate.range[0], ':')
    if (q) before.add(q.range[0])
    if (c) before.add(c.range[0])
  }
  if (node.type === 'ArrowFunctionExpression' && node.body.type !== 'BlockStatement') {
    const arrow = firstTokenIn(node.range[0], node.body.range[0], '=>')
    for (const set of arrow ? [after, tight] : []) set.add(arrow.range[1])
  }
}

// Where `line` (starting at offset `start`) breaks so that its first part fits: of the
// candidates that fit, the one that scores best: far to the right, at a shallow bracket depth,
// and leaving a rest that fits on the continuation line (`pad` columns in).
function bestBreak(line, start, tokens, points, column0, pad) {
  const candidates = []
  let depth = 0
  const stack = []
  for (const t of tokens) {
    const col = t.range[0] - start
    const inTemplate = stack.includes('${')
    const tightBefore = points.tight.has(t.range[0]) ? 1 : 0
    if (!inTemplate && points.before.has(t.range[0])) {
      candidates.push({ col, depth: depth + tightBefore })
    }
    if (t.type === 'Template') {
      if (t.value.startsWith('}')) stack.pop()
      if (t.value.endsWith('${')) stack.push('${')
    } else if (['(', '[', '{'].includes(t.value)) {
      depth++
      stack.push(t.value)
    } else if ([')', ']', '}'].includes(t.value)) {
      depth--
      stack.pop()
    }
    const end = t.range[1] - start
    const breaks = points.after.has(t.range[1]) || (depth === 0 && points.assign.has(t.range[1]))
    const tightAfter = points.tight.has(t.range[1]) ? 1 : 0
    if (!stack.includes('${') && breaks) candidates.push({ col: end, depth: depth + tightAfter })
  }
  const fitting = candidates.filter((c) => c.col > column0 && c.col <= width &&
    line.slice(0, c.col).trimEnd().length <= width && !/^[\s()[\]{},;]*$/.test(line.slice(c.col)) &&
    !/^\s*[)\]}>]/.test(line.slice(c.col)) && /[\w'"`]/.test(line.slice(c.col)))
  if (fitting.length === 0) return undefined
  const score = (c) => c.col - 30 * c.depth +
    (fits(`${' '.repeat(pad)}${line.slice(c.col).trim()}`) ? 40 : 0)
  return fitting.reduce((best, c) => (score(c) >= score(best) ? c : best)).col
}

// 3. Code over the width: each long line broken where the code allows.
async function fillCode(text, ast, long) {
  const lines = text.split('\n')
  const inTemplate = await templateLineStarts(text)
  const points = breakPoints(ast)
  const starts = []
  let offset = 0
  for (const line of lines) {
    starts.push(offset)
    offset += line.length + 1
  }
  let changed = 0
  for (const number of [...long].sort((a, b) => b - a)) {
    const i = number - 1
    if (inTemplate.has(i)) continue
    const out = breakLine(lines[i], starts[i], ast.tokens, points)
    if (out.length > 1) {
      lines.splice(i, 1, ...out)
      changed++
    }
  }
  return { text: lines.join('\n'), changed }
}

// One line broken into parts, each continuing at the same indentation.
function breakLine(line, start, allTokens, points) {
  const tokens = allTokens.filter((t) => t.range[0] >= start && t.range[1] <= start + line.length)
  const indent = indentOf(line)
  // A line that opens a block or a bracket: its continuation stands apart from what follows.
  const pad = `${indent}${/[{([]\s*$/.test(line) ? '    ' : '  '}`
  const out = []
  let from = 0
  for (let guard = 0; guard < 20; guard++) {
    const prefix = from === 0 ? '' : pad
    const rest = from === 0 ? line : line.slice(from).trimStart()
    const restStart = line.length - rest.length
    if (from > 0 && fits(`${prefix}${rest}`)) break
    if (prefix.length + rest.length <= width) break
    // Columns as they will be: the part's text begins at prefix.length.
    const shift = prefix.length - restStart
    const shifted = `${prefix}${rest}`
    const later = tokens.filter((t) => t.range[0] >= start + restStart)
    const col = bestBreak(shifted, start - shift, later, points,
      from === 0 ? indent.length : prefix.length, pad.length)
    if (col === undefined) break
    out.push(shifted.slice(0, col).trimEnd())
    from = restStart + (col - prefix.length)
  }
  if (out.length === 0) return [line]
  out.push(`${pad}${line.slice(from).trimStart()}`)
  // A line that does not come out short (a long string in it) is left whole, to be split by
  // hand: broken only partly, it would be longer and no shorter.
  return out.every(fits) ? out : [line]
}

// 4. A string over the width (what the steps above cannot shorten): split at spaces into
// pieces joined by `+`, each on a line of its own, continuing two columns in. Only strings
// whose place takes any expression (an argument, a value, an operand of `+`, …); a tagged
// template (sql`…`) and a string in a type are never split. A template literal is split in its
// text, never inside `${…}`.
const splittable = new Set(['CallExpression', 'NewExpression', 'Property', 'ArrayExpression',
  'VariableDeclarator', 'AssignmentExpression', 'ReturnStatement', 'ConditionalExpression',
  'LogicalExpression', 'ThrowStatement', 'AssignmentPattern', 'ArrowFunctionExpression',
  'PropertyDefinition'])

function splitPlace(node, parent) {
  if (!parent) return false
  if (parent.type === 'BinaryExpression') return parent.operator === '+'
  if (parent.type === 'Property') return parent.value === node
  if (parent.type === 'CallExpression' || parent.type === 'NewExpression') {
    return parent.arguments.includes(node)
  }
  return splittable.has(parent.type)
}

// Single-line strings and untagged templates with their parents, in source order.
function stringNodes(ast) {
  const found = []
  const visit = (node, parent) => {
    if (!node || typeof node.type !== 'string') return
    if (node.type === 'TaggedTemplateExpression' || node.type === 'TSLiteralType') return
    const string = (node.type === 'Literal' && typeof node.value === 'string') ||
      node.type === 'TemplateLiteral'
    if (string && node.loc.start.line === node.loc.end.line && splitPlace(node, parent)) {
      found.push(node)
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'parent') continue
      if (Array.isArray(value)) value.forEach((v) => visit(v, node))
      else if (value && typeof value.type === 'string') visit(value, node)
    }
  }
  visit(ast, undefined)
  return found
}

// Columns (in the line) where a string may be split: just after a space of its text.
function splitColumns(node, lineStart) {
  const texts = node.type === 'TemplateLiteral'
    ? node.quasis.map((q) => [q.range[0] + 1, q.range[1] - (q.tail ? 1 : 2)])
    : [[node.range[0] + 1, node.range[1] - 1]]
  return { texts: texts.map(([a, b]) => [a - lineStart, b - lineStart]) }
}

function splitString(line, node, lineStart, pad) {
  const quote = node.type === 'TemplateLiteral' ? '`' : line[node.range[0] - lineStart]
  const { texts } = splitColumns(node, lineStart)
  const spaces = []
  for (const [a, b] of texts) {
    for (let c = a; c < b - 1; c++) if (line[c] === ' ' && line[c - 1] !== '\\') spaces.push(c + 1)
  }
  const out = []
  let from = 0
  let prefix = ''
  for (let guard = 0; guard < 20; guard++) {
    const rest = line.slice(from)
    if (prefix.length + rest.length <= width) break
    // The piece ends at a space, then the quote and ` +` follow it.
    const room = width - prefix.length - 3
    const at = spaces.filter((c) => c > from && c - from <= room).at(-1)
    if (at === undefined) break
    out.push(`${prefix}${line.slice(from, at)}${quote} +`)
    prefix = `${pad}${quote}`
    from = at
  }
  if (out.length === 0) return undefined
  out.push(`${prefix}${line.slice(from)}`)
  return out.some((part) => part.length > width) ? undefined : out
}

// A string that ends its line before a ` +` whose next line begins with a string in the same
// quotes: the words past the width move to the start of that next string (the next pass
// shortens it in turn).
function moveIntoNext(lines, i, string, lineStart, literals) {
  const line = lines[i]
  const end = string.range[1] - lineStart
  if (line.slice(end).trim() !== '+' || i + 1 >= lines.length) return false
  const quote = line[end - 1]
  const nextStart = lineStart + line.length + 1 + indentOf(lines[i + 1]).length
  const next = literals.find((s) => s.range[0] === nextStart && s.loc.start.line === i + 2 &&
    s.loc.end.line === i + 2)
  if (!next || lines[i + 1][indentOf(lines[i + 1]).length] !== quote) return false
  const { texts } = splitColumns(string, lineStart)
  const [a] = texts.at(-1)
  let at = -1
  for (let c = a; c < end - 1; c++) {
    if (line[c] === ' ' && line[c - 1] !== '\\' && c + 1 + 3 <= width) at = c + 1
  }
  if (at < 0) return false
  const moved = line.slice(at, end - 1)
  lines[i] = `${line.slice(0, at)}${quote} +`
  const indent = indentOf(lines[i + 1])
  lines[i + 1] = `${indent}${quote}${moved}${lines[i + 1].slice(indent.length + 1)}`
  return true
}

async function splitStrings(text, ast, long) {
  const lines = text.split('\n')
  const starts = []
  let offset = 0
  for (const line of lines) {
    starts.push(offset)
    offset += line.length + 1
  }
  const strings = stringNodes(ast)
  let changed = 0
  for (const number of [...long].sort((a, b) => b - a)) {
    const i = number - 1
    const line = lines[i]
    // The string that crosses the width, else the longest one on the line.
    const onLine = strings.filter((s) => s.loc.start.line === number)
    const crossing = onLine.find((s) => s.loc.start.column < width && s.loc.end.column > width)
    const string = crossing ?? onLine.sort((a, b) => size(b) - size(a))[0]
    if (!string) continue
    if (moveIntoNext(lines, i, string, starts[i], strings)) {
      changed++
      continue
    }
    // A string that begins its line (a piece of a `+` chain) continues at its indentation.
    const leads = string.loc.start.column === indentOf(line).length
    const out = splitString(line, string, starts[i], `${indentOf(line)}${leads ? '' : '  '}`)
    if (!out) continue
    lines.splice(i, 1, ...out)
    changed++
  }
  return { text: lines.join('\n'), changed }
}

// The code's tokens and the comments' words: what a step that only moves line breaks and
// indentation must leave as it was (Prettier's units may add parentheses and commas).
function substance(ast) {
  const tokens = ast.tokens.map((t) => (t.type === 'Template' ? t.value.replace(/\n\s*/g, '\n')
    : t.value))
  const words = ast.comments.flatMap((c) => c.value.split(/[\s*]+/).filter(Boolean))
  return JSON.stringify([tokens, words])
}

/**
 * Reflows `file` in place (`prettier`: code in Prettier's style, else broken where it allows);
 * returns whether it changed and the long lines that remain (1-based).
 */
export async function reflowFile(eslint, file, { prettier = false, strings = false } = {}) {
  const original = fs.readFileSync(file, 'utf8')
  let text = original
  const steps = [moveTrailingComments, rewrapComments, prettier ? reflowCode : fillCode,
    ...(strings ? [splitStrings] : [])]
  // Three passes: a string's words moved into the next string may make that line long.
  for (const step of [...steps, ...(strings ? [splitStrings, splitStrings] : [])]) {
    const long = await longLines(eslint, text, file)
    if (long.length === 0) break
    const ast = await parse(text, file)
    const result = await step(text, ast, long, file)
    if (result.changed === 0) continue
    let problem
    try {
      const after = await parse(result.text, file)
      const same = step === reflowCode || step === splitStrings ||
        substance(after) === substance(ast)
      if (!same) problem = 'changed a token'
    } catch (error) {
      problem = `left code that does not parse (${error.message})`
    }
    if (problem) process.stderr.write(`reflow: ${file}: ${step.name} ${problem}; skipped\n`)
    else text = result.text
  }
  if (text !== original) fs.writeFileSync(file, text)
  return { changed: text !== original, long: await longLines(eslint, text, file) }
}

function sourceFiles(target) {
  const stat = fs.statSync(target)
  if (stat.isFile()) return [target]
  return fs.readdirSync(target, { recursive: true }).map((f) => path.join(target, f))
    .filter((f) => /\.(?:ts|mts|js|mjs)$/.test(f) && !f.split(path.sep).includes('node_modules'))
}

async function main(args) {
  const check = args.includes('--check')
  const targets = args.filter((a) => !a.startsWith('--'))
  if (targets.length === 0) {
    process.stderr.write('usage: npm run reflow -- [--check] [--prettier] <file or folder>…\n')
    return 2
  }
  const { ESLint } = await import('eslint')
  const eslint = new ESLint({
    cwd: projectRoot, overrideConfigFile: path.join(projectRoot, 'eslint.config.mjs'),
  })
  let remaining = 0
  let changedFiles = 0
  for (const file of targets.flatMap(sourceFiles)) {
    if (await eslint.isPathIgnored(file)) continue
    const result = check
      ? { changed: false, long: await longLines(eslint, fs.readFileSync(file, 'utf8'), file) }
      : await reflowFile(eslint, file, {
        prettier: args.includes('--prettier'), strings: args.includes('--strings'),
      })
    if (result.changed) changedFiles++
    remaining += result.long.length
    const now = fs.readFileSync(file, 'utf8').split('\n')
    for (const l of result.long) {
      process.stdout.write(`${path.relative(projectRoot, path.resolve(file))}:${l} ` +
        `(${now[l - 1].length}) ${now[l - 1].trim().slice(0, 60)}\n`)
    }
  }
  process.stdout.write(`reflow: ${changedFiles} file(s) changed, ${remaining} long line(s) ` +
    'remain\n')
  return 0
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2))
}
