import fs from 'node:fs'
import path from 'node:path'

// The fenced code blocks of the partner guides and the operators' pages, with the markers
// that say how test/docs/guides.test.ts runs each. A marker is an HTML comment on the lines
// right above a block's opening fence (a reader of the rendered page does not see it; one
// of the Markdown does):
//
//   <!-- not-run: REASON -->          the block is not run (a unit file, a deployment's
//                                     commands); REASON says why. `text` blocks (output a
//                                     command printed) need none.
//   <!-- setup: FIXTURE [K=V ...] --> a `ts` or `sh` block runs with a fixture of the test's
//                                     (guide-fixtures.ts): a partner, an `ops` client, …;
//                                     K=V are more environment variables for the program.
//   <!-- background: until "TEXT" --> a `ts` program that keeps running: the page's next
//                                     blocks run once it printed a line containing TEXT,
//                                     and it must end well by the page's end.
//   <!-- json: reply of SUBJECT -->   a `json` block is the reply (or `request of`) of the
//   <!-- json: error reply -->        operation on SUBJECT, or an error reply's body.
//   <!-- exit: N -->                  an `sh` block's commands exit N (0 unless marked).
//
// Languages: `ts`/`typescript` run as programs, `sh`/`bash`/`shell` as `bank` commands,
// `json` is parsed, `text` is output. Any other block needs `not-run`.

export interface Markers {
  notRun?: string
  setup?: { fixture: string; env: Record<string, string> }
  backgroundUntil?: string
  json?: { kind: 'reply' | 'request'; subject: string } | { kind: 'error' }
  exit?: number
  /** Comments above the block that are none of the above. */
  unknown: string[]
}

export interface Block {
  /** The page, relative to the repository: `docs/guides/payments.md`. */
  page: string
  /** The line of the opening fence (1-based). */
  line: number
  lang: string
  text: string
  markers: Markers
}

export type BlockKind = 'ts' | 'sh' | 'json' | 'text' | 'not-run' | 'unknown'

export function kindOf(block: Block): BlockKind {
  if (block.markers.notRun !== undefined) return 'not-run'
  if (block.lang === 'ts' || block.lang === 'typescript') return 'ts'
  if (block.lang === 'sh' || block.lang === 'bash' || block.lang === 'shell') return 'sh'
  if (block.lang === 'json') return 'json'
  if (block.lang === 'text') return 'text'
  return 'unknown'
}

/** The pages whose blocks are run: the partner guides and the operators' pages. */
export function guidePages(root: string): string[] {
  const under = (dir: string) =>
    fs.readdirSync(path.join(root, dir))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `${dir}/${name}`)
  return [...under('docs/guides'), ...under('docs/operators'), 'docs/operations.md']
}

const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/

/** Every fenced block of a page, in order, with its markers. */
export function blocksOf(root: string, page: string): Block[] {
  const lines = fs.readFileSync(path.join(root, page), 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = fence.exec(lines[i]!)
    if (!open) continue
    const [, indent, marks, lang] = open as unknown as [string, string, string, string]
    const closes = (line: string) => line.trim().startsWith(marks) && /^(`+|~+)$/.test(line.trim())
    const close = lines.findIndex((line, j) => j > i && closes(line))
    const end = close === -1 ? lines.length : close
    const dedent = (line: string) =>
      line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()
    const text = lines.slice(i + 1, end).map(dedent).join('\n') + '\n'
    const markers = markersAbove(lines, i)
    blocks.push({ page, line: i + 1, lang: lang.toLowerCase(), text, markers })
    i = end
  }
  return blocks
}

/** The HTML comments on the lines right above line `at` (0-based). */
function markersAbove(lines: string[], at: number): Markers {
  const markers: Markers = { unknown: [] }
  for (let i = at - 1; i >= 0; i--) {
    const comment = /^\s*<!--\s*([\s\S]*?)\s*-->\s*$/.exec(lines[i]!)
    if (!comment) break
    readMarker(comment[1]!, markers)
  }
  return markers
}

function readMarker(text: string, markers: Markers): void {
  const [, name, value = ''] = /^([\w-]+):\s*([\s\S]*)$/.exec(text) ?? [undefined, '', '']
  if (name === 'not-run' && value) markers.notRun = value
  else if (name === 'setup' && value) {
    const [fixture, ...pairs] = value.split(/\s+/)
    const env = Object.fromEntries(pairs.map((pair) => pair.split(/=(.*)/s).slice(0, 2) as [string, string]))
    markers.setup = { fixture: fixture!, env }
  } else if (name === 'background' && /^until "(.+)"$/.test(value)) {
    markers.backgroundUntil = /^until "(.+)"$/.exec(value)![1]!
  } else if (name === 'json' && value === 'error reply') markers.json = { kind: 'error' }
  else if (name === 'json' && /^(reply|request) of \S+$/.test(value)) {
    const [kind, , subject] = value.split(' ') as ['reply' | 'request', string, string]
    markers.json = { kind, subject }
  } else if (name === 'exit' && /^\d+$/.test(value)) markers.exit = Number(value)
  else markers.unknown.push(text)
}

/** One command of an `sh` block: its words (quotes removed) and the line it starts on. */
export interface Command {
  words: string[]
  source: string
}

/** The commands of an `sh` block: `\` continues a line, `#` starts a comment. */
export function commandsOf(text: string): Command[] {
  const joined = text.replace(/\\\n/g, ' ')
  const commands: Command[] = []
  for (const line of joined.split('\n')) {
    const words = shellWords(line)
    if (words.length > 0) commands.push({ words, source: line.trim() })
  }
  return commands
}

/** Splits a line into words as a shell would, for plain words and quotes; stops at `#`. */
export function shellWords(line: string): string[] {
  const words: string[] = []
  let word: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1)
      if (end === -1) throw new Error(`unclosed quote in: ${line}`)
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word)
      word = undefined
    } else if (c === '#' && word === undefined) break
    else word = (word ?? '') + c
  }
  if (word !== undefined) words.push(word)
  return words
}
