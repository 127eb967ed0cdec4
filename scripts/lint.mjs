// `npm run lint`: checks the lint rules of eslint.config.mjs (the length of a line and of a
// function, a function's branches and nesting) on every source file of the project, and
// fails on any violation that eslint-suppressions.json does not tolerate. `npm test` runs it
// beside the type check. The suppressions are ESLint's bulk suppressions (the file `eslint
// --suppress-all` writes, which `npx eslint` reads too): per file and rule, how many
// violations the code had when the rules came in. Issue 41 drove them to zero and deleted
// the file: with none, every violation fails. The last line printed always says how many
// remain.
// Options: paths to check only those (`npm run lint -- src/ledger`); `--json` prints the
// result as JSON; `--baseline` (`npm run lint:baseline`) rewrites the suppressions from the
// code as it is, and refuses when a rule's total would grow, unless `--grow` is given too.
//
// ESLint counts per file and rule: when a file breaks a rule more often than tolerated, every
// one of its violations of that rule is reported; those on lines changed since the last
// commit (git diff HEAD) are marked with a *, and the new one is among them.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const configFile = 'eslint.config.mjs'
export const suppressionsFile = 'eslint-suppressions.json'

/**
 * Lints `patterns` (relative to `cwd`; by default everything the config covers) under the
 * rules of `config`, and applies `suppressions` (a suppressions file's content) as ESLint
 * does: a file's violations of a rule are known while there are no more of them than it
 * tolerates. Returns the new violations (file, line, column, rule, message; for a file over
 * its count also `found` and `tolerated`), the known counts per rule, the suppressions that
 * no longer occur (`fixed`), and the counts per file and rule (`counts`, a suppressions file).
 */
export async function checkLint({
  root = projectRoot,
  cwd = root,
  patterns = ['.'],
  config = path.join(root, configFile),
  suppressions = readSuppressions(path.join(root, suppressionsFile)),
  cache = true,
} = {}) {
  const started = performance.now()
  const { ESLint } = await import('eslint')
  const cacheLocation = path.join(root, 'node_modules/.cache/eslint/')
  const eslint = new ESLint({
    cwd,
    overrideConfigFile: config,
    errorOnUnmatchedPattern: false,
    warnIgnored: false,
    // Only the files changed since the last run are linted again (1 CPU-s rather than 10).
    ...(cache ? { cache: true, cacheLocation } : {}),
  })
  const results = await eslint.lintFiles(patterns)
  const relative = (file) => path.relative(cwd, file).split(path.sep).join('/')
  const found = results.map((r) => ({ file: relative(r.filePath), byRule: byRule(r) }))
  // A whole run also finds the suppressed files that are gone (moved, renamed or removed).
  const whole = patterns.length === 1 && patterns[0] === '.'
  return {
    ...applySuppressions(found, suppressions, { whole }),
    files: results.length,
    ms: Math.round(performance.now() - started),
  }
}

/** A file's violations, by rule. */
function byRule(result) {
  const rules = new Map()
  for (const m of result.messages) {
    // A file that does not parse has no rule; it is always new.
    const rule = m.ruleId ?? 'parse-error'
    if (!rules.has(rule)) rules.set(rule, [])
    rules.get(rule).push({ line: m.line, column: m.column, rule, message: m.message })
  }
  return rules
}

/** ESLint's bulk suppressions, applied to each file's violations by rule. */
function applySuppressions(found, suppressions, { whole }) {
  const counts = {}
  const newViolations = []
  const known = {}
  const fixed = []
  for (const { file, byRule } of found) {
    for (const [rule, violations] of byRule) {
      const tolerated = suppressions[file]?.[rule]?.count ?? 0
      const over = tolerated > 0 ? { found: violations.length, tolerated } : {}
      const at = violations.map((v) => ({ file, ...v, ...over }))
      if (rule === 'parse-error') {
        newViolations.push(...at)
        continue
      }
      ;(counts[file] ??= {})[rule] = { count: violations.length }
      if (violations.length <= tolerated) known[rule] = (known[rule] ?? 0) + violations.length
      else newViolations.push(...at)
      const gone = tolerated - violations.length
      if (gone > 0) fixed.push({ file, rule, count: gone })
    }
    for (const [rule, { count }] of Object.entries(suppressions[file] ?? {})) {
      if (!byRule.has(rule)) fixed.push({ file, rule, count })
    }
  }
  const linted = new Set(found.map((f) => f.file))
  for (const [file, rules] of Object.entries(whole ? suppressions : {})) {
    if (linted.has(file)) continue
    for (const [rule, { count }] of Object.entries(rules)) fixed.push({ file, rule, count })
  }
  return { newViolations, known, fixed, counts }
}

export function readSuppressions(file) {
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {}
}

/** Per rule, the violations a suppressions file tolerates. */
export function totalsByRule(suppressions) {
  const totals = {}
  for (const rules of Object.values(suppressions)) {
    for (const [rule, { count }] of Object.entries(rules)) {
      totals[rule] = (totals[rule] ?? 0) + count
    }
  }
  return totals
}

/**
 * The lines of `file` (relative to `root`) added or changed since HEAD: a set of line
 * numbers, 'all' for a file git does not track, undefined without git.
 */
export function changedLines(root, file) {
  const git = (args) => spawnSync('git', ['-C', root, ...args], { encoding: 'utf8' })
  if (git(['ls-files', '--error-unmatch', '--', file]).status !== 0) {
    return git(['rev-parse', '--git-dir']).status === 0 ? 'all' : undefined
  }
  const diff = git(['diff', '-U0', 'HEAD', '--', file])
  if (diff.status !== 0) return undefined
  const lines = new Set()
  for (const [, start, count] of diff.stdout.matchAll(/^@@ -\S+ \+(\d+)(?:,(\d+))? @@/gm)) {
    for (let i = 0; i < Number(count ?? 1); i++) lines.add(Number(start) + i)
  }
  return lines
}

const describe = (v) => `${v.file}:${v.line}:${v.column} ${v.rule}: ${v.message}`

/** A file's new violations; for a rule over its count, all of them, the changed lines marked. */
function fileReport(file, violations, changed) {
  const lines = violations.filter((v) => !v.tolerated).map((v) => `  ${describe(v)}`)
  const over = violations.filter((v) => v.tolerated)
  const touched = over.length > 0 ? changed(file) : undefined
  for (const rule of new Set(over.map((v) => v.rule))) {
    const ofRule = over.filter((v) => v.rule === rule)
    const { found, tolerated } = ofRule[0]
    const marked = touched ? ' (* on a line changed since HEAD)' : ''
    lines.push(`  ${file}: ${found} violations of ${rule}, ${suppressionsFile} tolerates ` +
      `${tolerated}; the new ones are among these${marked}:`)
    for (const v of ofRule) {
      const mark = touched === 'all' || touched?.has(v.line) ? '*' : ' '
      lines.push(`   ${mark}${describe(v)}`)
    }
  }
  return lines
}

/** The report: each new violation, file by file, then one line of counts. */
export function formatReport(result, { changed = () => undefined } = {}) {
  const lines = []
  const total = Object.values(result.known).reduce((sum, n) => sum + n, 0)
  const byRule = Object.entries(result.known).map(([rule, n]) => `${rule} ${n}`).join(', ')
  if (result.newViolations.length > 0) {
    lines.push(`lint: new violations of the rules in ${configFile}:`)
    for (const file of new Set(result.newViolations.map((v) => v.file))) {
      lines.push(...fileReport(file, result.newViolations.filter((v) => v.file === file), changed))
    }
    lines.push('  Shorten the line or the function. (`npm run lint:baseline` would tolerate ' +
      'these: only for a reason the commit gives.)')
  }
  if (result.fixed.length > 0) {
    const fixedCount = result.fixed.reduce((sum, f) => sum + f.count, 0)
    lines.push(`lint: ${fixedCount} tolerated violation(s) no longer occur ` +
      `(${result.fixed.length} file and rule entries); \`npm run lint:baseline\` drops them ` +
      `from ${suppressionsFile}`)
  }
  lines.push(
    `lint: ${result.newViolations.length} new, ${total} known violations remain` +
      `${byRule ? ` (${byRule})` : ''}; ${result.files} files in ` +
      `${(result.ms / 1000).toFixed(1)} s`,
  )
  return `${lines.join('\n')}\n`
}

/** The suppressions file's text: files and rules sorted, as `eslint --suppress-all` writes it. */
export function formatSuppressions(counts) {
  const sorted = (o) => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]))
  const files = Object.fromEntries(Object.entries(counts).map(([f, rules]) => [f, sorted(rules)]))
  return `${JSON.stringify(sorted(files), null, 2)}\n`
}

/** `--baseline`: rewrites the suppressions from the code; refuses a rule's total to grow. */
function writeBaseline(result, { grow }) {
  const file = path.join(projectRoot, suppressionsFile)
  const before = totalsByRule(readSuppressions(file))
  const after = totalsByRule(result.counts)
  const rules = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
  const grows = (rule) => (after[rule] ?? 0) > (before[rule] ?? 0)
  const grown = fs.existsSync(file) ? rules.filter(grows) : []
  for (const rule of rules) {
    process.stdout.write(`lint baseline: ${rule} ${before[rule] ?? 0} → ${after[rule] ?? 0}\n`)
  }
  if (grown.length > 0 && !grow) {
    process.stdout.write(`lint baseline: not written: ${grown.join(', ')} would grow. ` +
      'Fix the new violations (`npm run lint` names them), or give `-- --grow` and say why ' +
      'in the commit.\n')
    return 1
  }
  fs.writeFileSync(file, formatSuppressions(result.counts))
  process.stdout.write(`lint baseline: ${suppressionsFile} written\n`)
  return 0
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const args = process.argv.slice(2)
  const paths = args.filter((a) => !a.startsWith('--'))
  if (args.includes('--baseline')) {
    if (paths.length > 0) throw new Error('--baseline checks the whole project; give no paths')
    const result = await checkLint({ suppressions: {} })
    process.exitCode = writeBaseline(result, { grow: args.includes('--grow') })
  } else {
    const result = await checkLint({ patterns: paths.length > 0 ? paths : ['.'] })
    const changed = (file) => changedLines(projectRoot, file)
    if (args.includes('--json')) process.stdout.write(`${JSON.stringify(result, null, 1)}\n`)
    else process.stdout.write(formatReport(result, { changed }))
    process.exitCode = result.newViolations.length > 0 ? 1 : 0
  }
}
