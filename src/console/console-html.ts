// HTML made on the server, escaped by construction: `html` escapes every value put into it
// unless the value is itself `html` (a fragment made the same way). Amounts are shown in rand,
// times in SAST (UTC+2 all year: South Africa keeps no daylight saving).

import { sast_offset_ms } from '../calendar/sa-calendar.ts'
import { formatRand } from '../contract/format.ts'

/** A fragment of HTML whose values were escaped when it was made. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

const escapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c]!)
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === undefined || value === null || value === false) return ''
  return escapeHtml(String(value))
}

/** A tagged template: `html\`<p>${text}</p>\`` escapes `text`. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? ''
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '')
  })
  return new Html(out)
}

/** Cents (a whole number, as the bank sends it: a decimal string) in rand: R1,234.56. */
export function rand(cents: string | number | bigint): string {
  return formatRand(BigInt(cents))
}

/** An RFC 3339 time in SAST: 2026-11-23 10:00:00 SAST. */
export function sast(at: string | null | undefined): string {
  if (!at) return ''
  const ms = Date.parse(at)
  if (Number.isNaN(ms)) return at
  return `${new Date(ms + sast_offset_ms).toISOString().slice(0, 19).replace('T', ' ')} SAST`
}

/** A byte count in words: 12 B, 3.4 KB, 1.2 MB. */
export function bytes(size: number): string {
  if (size < 1024) return `${size} B`
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`
  return `${(size / 1024 / 1024).toFixed(1)} MB`
}

/** A link to `path` with the query `params` (empty values left out). */
export function href(path: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') query.set(name, String(value))
  }
  const text = query.toString()
  return text ? `${path}?${text}` : path
}

export interface PageFrame {
  title: string
  /** The nav entry to mark as current. */
  current?: string
  /** The session's CSRF token (signed in), for the sign-out form; absent on the sign-in page. */
  csrf?: string
  /** The bank is a sandbox: every page says so. */
  sandbox?: boolean
  body: Html
  scripts?: readonly string[] | undefined
  styles?: readonly string[] | undefined
}

const nav: ReadonlyArray<[path: string, label: string]> = [
  ['/', 'Overview'],
  ['/partners', 'Partners'],
  ['/kyc', 'KYC review'],
  ['/kyb', 'KYB review'],
  ['/screening', 'Screening'],
  ['/cases', 'Cases'],
  ['/payments', 'Payments'],
  ['/rails', 'Rails'],
  ['/webhooks', 'Webhooks'],
  ['/approvals', 'Approvals'],
  ['/sandbox', 'Sandbox'],
  ['/audit', 'Audit log'],
]

function navigation(current: string | undefined, csrf: string): Html {
  const links = nav.map(([path, label]) => {
    const mark = path === current ? html` aria-current="page"` : ''
    return html`<li><a href="${path}" ${mark}>${label}</a></li>`
  })
  return html`<nav aria-label="Console">
    <ul>
      ${links}
    </ul>
    <form method="post" action="/sign-out" class="sign-out">
      <input type="hidden" name="csrf" value="${csrf}" /><button type="submit">Sign out</button>
    </form>
  </nav>`
}

const sandboxBanner = html`<p class="sandbox-banner" role="status"><strong>Sandbox.</strong>
  No money leaves this bank, and its clock can be moved forward with the
  <a href="/sandbox">sandbox tools</a>.</p>`

/** A whole page: the console's frame (header, nav when signed in) around `body`. */
export function page(frame: PageFrame): string {
  const top = frame.csrf === undefined ? '' : navigation(frame.current, frame.csrf)
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${frame.title} · Bank console</title>
        <link rel="stylesheet" href="/console.css" />
        ${(frame.styles ?? []).map((path) => html`<link rel="stylesheet" href="${path}" />`)}
        ${(frame.scripts ?? []).map((path) => html`<script src="${path}" defer></script>`)}
      </head>
      <body>
        <header>
          <p class="brand">Bank console</p>
          ${top}
        </header>
        ${frame.sandbox ? sandboxBanner : ''}
        <main>
          <h1>${frame.title}</h1>
          ${frame.body}
        </main>
      </body>
    </html> `.text
}
