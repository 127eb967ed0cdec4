import path from 'node:path'
import { blocksOf, guidePages } from '../../docs/support/guide-blocks.ts'
import { fixtures } from '../../docs/support/guide-fixtures.ts'

// The guides' TypeScript snippets as a partner's project holds them, for the packed-package
// test (package-install.test.ts): every `ts` block of docs/guides/, and of the operators'
// pages those that import the SDK (the others are fragments of the service's own code). A
// block the guide test runs with a fixture gets the fixture's code around it, as it runs
// there (`ops` for the operator's pages). A block that names values its page made earlier
// gets them declared (the stubs below, each saying which block and why).

export interface Snippet {
  /** `<page>-<line>`: the file the snippet is written to, without `.ts`. */
  name: string
  page: string
  text: string
}

interface Stub {
  page: string
  /** The block's text includes this. */
  when: string
  declarations: string
}

/** The values a block uses but does not make, declared so that it compiles alone. */
export const stubs: readonly Stub[] = [
  // docs/guides/cards.md, the card network's calls: not run (it needs a card network
  // credential); its `token` and `card_id` come from the page's earlier steps.
  { page: 'docs/guides/cards.md', when: 'new CardNetworkClient',
    declarations: 'declare const token: string\ndeclare const card_id: string\n' },
]

const sdkImport = /from '@partner-bank\/client'/

/** The `ts` blocks of the package's own README, each a program of its own. */
export function readmeSnippets(root: string): Snippet[] {
  return blocksOf(root, 'packages/client/README.md')
    .filter((block) => block.lang === 'ts')
    .map((block) => ({ name: `readme-${block.line}`, page: block.page, text: block.text }))
}

export function guideSnippets(root: string): Snippet[] {
  return guidePages(root).flatMap((page) => blocksOf(root, page))
    .filter((block) => ['ts', 'typescript'].includes(block.lang))
    .filter((block) => block.page.startsWith('docs/guides/') || sdkImport.test(block.text))
    .map((block) => {
      const fixture = fixtures[block.markers.setup?.fixture ?? '']
      const stub = stubs.filter((s) => s.page === block.page && block.text.includes(s.when))
      const text = [fixture?.prelude ?? '', ...stub.map((s) => s.declarations), block.text,
        fixture?.epilogue ?? ''].join('')
      return { name: `${path.basename(block.page, '.md')}-${block.line}`, page: block.page, text }
    })
}

/**
 * A snippet as a CommonJS file can hold it: its imports first, the rest inside an async
 * function (CommonJS has no top-level await), and its stubs' declarations outside it.
 */
export function wrappedInFunction(snippet: Snippet): string {
  const lines = snippet.text.split('\n')
  const outside = (line: string) => /^import\s/.test(line) || /^declare\s/.test(line)
  return [
    ...lines.filter(outside),
    'async function main(): Promise<void> {',
    ...lines.filter((line) => !outside(line)).map((line) => (line ? `  ${line}` : line)),
    '}',
    'void main()',
    '',
  ].join('\n')
}
