import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'

// Every relative link and `#anchor` in the docs resolves: README.md, CONTRIBUTING.md and
// docs/**/*.md. A file must exist inside the repository; an anchor must be a heading of the
// file it points into, named as GitHub names it.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

function markdownUnder(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = `${dir}/${entry.name}`
    if (entry.isDirectory()) return markdownUnder(file)
    return entry.name.endsWith('.md') ? [file] : []
  })
}

const docs = ['README.md', 'CONTRIBUTING.md', ...markdownUnder('docs')]
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8')

/** The text outside fenced code blocks, with inline code spans blanked. */
function prose(text: string): string {
  let fenced = false
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced
      return ''
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, (span) => (span.includes('](') ? '``' : span))
  }).join('\n')
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors of a Markdown file's headings, a repeated one numbered -1, -2, … as GitHub does. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const match of prose(text).matchAll(/^#{1,6}[ \t]+(.*?)[ \t#]*$/gm)) {
    const base = slug(match[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    out.add(count === 0 ? base : `${base}-${count}`)
  }
  return out
}

type Link = { file: string, href: string }

function links(file: string): Link[] {
  const hrefs = [...prose(read(file)).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
  return hrefs.map((match) => ({ file, href: match[1]! }))
}

/** Why a relative link does not resolve, or undefined when it does. */
function broken({ file, href }: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return undefined
  const [target = '', anchor] = href.split('#')
  const resolved = target === '' ? file : path.posix.join(path.posix.dirname(file), target)
  const absolute = path.join(root, resolved)
  if (resolved.startsWith('../') || path.isAbsolute(resolved)) return 'outside the repository'
  if (!fs.existsSync(absolute)) return `${resolved} does not exist`
  if (anchor === undefined) return undefined
  if (!resolved.endsWith('.md')) return `#${anchor} into ${resolved}, which is not Markdown`
  const known = anchors(read(resolved))
  return known.has(decodeURIComponent(anchor)) ? undefined : `${resolved} has no #${anchor}`
}

test('links - the slugs follow GitHub: code, punctuation and links dropped, spaces hyphened', () => {
  assert.equal(slug('Background work: jobs and events'), 'background-work-jobs-and-events')
  assert.equal(
    slug('Transfers (`svc.account.<partner_id>.transfer_eft_rtc`)'),
    'transfers-svcaccountpartner_idtransfer_eft_rtc',
  )
  assert.equal(slug('Debit-order collection runs'), 'debit-order-collection-runs')
  assert.equal(slug('See [Storage](docs/x.md) now'), 'see-storage-now')
  assert.deepEqual([...anchors('# A\n## A\n```\n# B\n```\n### A\n')], ['a', 'a-1', 'a-2'])
})

test('links - every relative link and #anchor in the docs resolves', () => {
  const all = docs.flatMap(links)
  assert.ok(all.length > 50, `the docs link to each other (${all.length} links found)`)
  const failures = all.flatMap((link) => {
    const why = broken(link)
    return why ? [`${link.file}: (${link.href}) ${why}`] : []
  })
  assert.deepEqual(failures, [])
})

test('links - the README links no file outside the repository, nor into ../shared', () => {
  const outside = links('README.md').filter(({ href }) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return false
    return href.startsWith('/') || path.posix.normalize(href).startsWith('../')
  })
  assert.deepEqual(outside, [])
  assert.doesNotMatch(read('README.md'), /\]\([^)]*\.\.\/shared/)
})
