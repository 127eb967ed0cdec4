import type { OperatorClient } from '../client/operator-client.ts'
import { href, html, type Html } from './console-html.ts'
import type { SessionOperator } from './console-sessions.ts'

// What the console's pages share: the reply types of the operator client, tables, filter
// forms, pagers and one-button forms. Lists the bank returns whole are paged here, by
// `page` in the query string; lists the bank pages itself keep its cursor in the query
// string, so every page of every list is a link.

export type Reply<F> = F extends (...args: never[]) => Promise<infer R> ? R : never
export type Ops = OperatorClient

/**
 * What a page handler gets: the URL asked for, the operator's client, who the operator is (the
 * credential id the bank answered at sign-in) and the CSRF token.
 */
export interface PageRequest {
  url: URL
  client: OperatorClient
  operator: SessionOperator
  csrf: string
}

export interface Rendered {
  title: string
  current: string
  body: Html
  status?: number
  /** Scripts the page loads (the console's own paths only), deferred. */
  scripts?: string[]
  /** Style sheets besides the console's own. */
  styles?: string[]
}

/** A file a page answers instead of HTML (a statement): sent as an attachment. */
export interface Download {
  download: { file_name: string; content_type: string; content: Buffer }
}

/** Rows shown per page of a list the bank returns whole. */
export const page_rows = 25
/** The most pages of a list the console offers (a limit on what a URL can ask for). */
export const page_number_max = 1000

export function pageNumber(url: URL): number {
  const n = Number(url.searchParams.get('page') ?? '1')
  return Number.isInteger(n) && n >= 1 && n <= page_number_max ? n : 1
}

/** A query-string value, trimmed; absent or blank → undefined. */
export function param(url: URL, name: string): string | undefined {
  const value = url.searchParams.get(name)?.trim()
  return value ? value.slice(0, 200) : undefined
}

/** One of `allowed`, else the default. */
export function choice<T extends string>(url: URL, name: string, allowed: readonly T[], d: T): T {
  const value = url.searchParams.get(name)
  return (allowed as readonly string[]).includes(value ?? '') ? (value as T) : d
}

const uuid_pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(text: string | undefined): text is string {
  return text !== undefined && uuid_pattern.test(text)
}

/** Keeps the items whose text (the fields given) contains `q`, case-insensitively. */
export function matching<T>(items: readonly T[], q: string | undefined, text: (t: T) => string) {
  if (!q) return [...items]
  const needle = q.toLowerCase()
  return items.filter((item) => text(item).toLowerCase().includes(needle))
}

/** One page of a whole list, and whether more follow. */
export function slicePage<T>(items: readonly T[], pageNo: number): { rows: T[]; more: boolean } {
  const rows = items.slice((pageNo - 1) * page_rows, pageNo * page_rows)
  return { rows, more: items.length > pageNo * page_rows }
}

type Params = Record<string, string | number | undefined>

export function pager(path: string, params: Params, pageNo: number, more: boolean): Html {
  const previous =
    pageNo > 1 ? html`<a href="${href(path, { ...params, page: pageNo - 1 })}">Previous</a>` : ''
  const next = more ? html`<a href="${href(path, { ...params, page: pageNo + 1 })}">Next</a>` : ''
  return html`<p class="pager">${previous} <span>Page ${pageNo}</span> ${next}</p>`
}

/** A pager for a list the bank pages by cursor: the first page, and the next. */
export function cursorPager(path: string, params: Params, next: string | undefined): Html {
  const { cursor, ...kept } = params
  const first = cursor ? html`<a href="${href(path, kept)}">First page</a>` : ''
  const more = next ? html`<a href="${href(path, { ...kept, cursor: next })}">Next page</a>` : ''
  return html`<p class="pager">${first} ${more}</p>`
}

export interface Column<T> {
  label: string
  cell: (row: T) => unknown
  amount?: boolean
}

export function table<T>(rows: readonly T[], columns: ReadonlyArray<Column<T>>, none: string) {
  if (rows.length === 0) return html`<p>${none}</p>`
  const head = columns.map(
    (c) => html`<th scope="col" class="${c.amount ? 'amount' : ''}">${c.label}</th>`,
  )
  const body = rows.map(
    (row) =>
      html`<tr>
        ${columns.map((c) => html`<td class="${c.amount ? 'amount' : ''}">${c.cell(row)}</td>`)}
      </tr>`,
  )
  return html`<table>
    <thead>
      <tr>
        ${head}
      </tr>
    </thead>
    <tbody>
      ${body}
    </tbody>
  </table>`
}

export interface FilterField {
  name: string
  label: string
  value: string | undefined
  /** A select of these values (the first is "any" when it is ''). */
  options?: readonly string[]
}

function filterInput(path: string, f: FilterField): Html {
  const id = `f-${path.replace(/\W/g, '')}-${f.name}`
  if (!f.options) {
    return html`<label for="${id}">${f.label}</label
      ><input type="text" id="${id}" name="${f.name}" value="${f.value ?? ''}" />`
  }
  const options = f.options.map(
    (o) =>
      html`<option value="${o}" ${o === (f.value ?? '') ? html`selected` : ''}>
        ${o || 'any'}
      </option>`,
  )
  return html`<label for="${id}">${f.label}</label
    ><select id="${id}" name="${f.name}">
      ${options}
    </select>`
}

/** A GET form: its fields become the query string, so a filtered list is a link. */
export function filterForm(path: string, fields: readonly FilterField[]): Html {
  return html`<form method="get" action="${path}" class="filters">
    ${fields.map((f) => filterInput(path, f))}
    <p><button type="submit">Filter</button></p>
  </form>`
}

/** A form of one button (and hidden fields) that POSTs with the session's CSRF token. */
export function actionForm(
  action: string,
  csrf: string,
  label: string,
  fields: Record<string, string> = {},
): Html {
  const hidden = Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  )
  return html`<form method="post" action="${action}" class="inline">
    <input type="hidden" name="csrf" value="${csrf}" />${hidden}
    <button type="submit">${label}</button>
  </form>`
}

/** The longest notice shown (a redirect's `done`: it names a hold's reference, a payee). */
const notice_chars_max = 400

export function notice(url: URL): Html {
  const done = url.searchParams.get('done')
  if (!done) return html``
  return html`<p class="notice" role="status">${done.slice(0, notice_chars_max)}</p>`
}

/** A redirect target carrying a short notice of what was done. */
export function doneAt(path: string, what: string, params: Params = {}): string {
  return href(path, { ...params, done: what })
}

export function idLink(path: string, id: string, text?: string): Html {
  return html`<a href="${path}" class="id">${text ?? id}</a>`
}

/** An account's status as the bank names it. */
export type AccountStatus = Reply<Ops['accounts']['show']>['status']

/**
 * An account's status as a badge: the bank's word for it (so it reads the same to a screen
 * reader and without colour), styled per status (`.badge-<status>` in console-style.ts).
 */
export function statusBadge(status: AccountStatus): Html {
  return html`<span class="badge badge-${status}">${status}</span>`
}
