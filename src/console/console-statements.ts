import { sast_offset_ms } from '../calendar/sa-calendar.ts'
import { BankApiError } from '../client/transport.ts'
import {
  isStatementDay, statement_days_max, statement_formats, statement_inline_lines_max,
} from '../statements/statements-contract.ts'
import { html, type Html } from './console-html.ts'
import { idLink, param, type Download, type PageRequest, type Rendered } from './console-kit.ts'

// An account's statement for operators (`ops.account.statement`, docs/guides/payments.md
// "Statements"): without a query, a form of its days and format; with one, the file itself,
// a download (PDF or camt.053). The bank makes it in the reply only: a range of more than
// `statement_inline_lines_max` lines is refused, and the form says so with the bank's words.
// A bad or missing date is the form again with what is wrong, never an error page.

type Format = (typeof statement_formats)[number]

interface Asked {
  from: string
  to: string
  format: string
}

/** Today in South Africa (the console's clock), YYYY-MM-DD. */
function today(): string {
  return new Date(Date.now() + sast_offset_ms).toISOString().slice(0, 10)
}

/** What is wrong with the form's values, in words; empty when the bank may be asked. */
export function statementProblems(asked: Asked): string[] {
  const problems: string[] = []
  for (const [name, value] of [['From', asked.from], ['To', asked.to]] as const) {
    if (!value) problems.push(`${name}: a date is required, like 2026-11-01.`)
    else if (!isStatementDay(value)) {
      problems.push(`${name}: "${value}" is not a real date; write it like 2026-11-01.`)
    }
  }
  if (problems.length === 0 && asked.from > asked.to) {
    problems.push('To: must not be before From.')
  }
  if (!(statement_formats as readonly string[]).includes(asked.format)) {
    problems.push('Format: choose pdf or camt053.')
  }
  return problems
}

function statementForm(accountId: string, asked: Asked): Html {
  const path = `/accounts/${accountId}/statement`
  const options = statement_formats.map((f) => html`<option value="${f}" ${
    f === asked.format ? html`selected` : ''}>${f === 'pdf' ? 'PDF' : 'camt.053 (XML)'}</option>`)
  return html`<form method="get" action="${path}" class="filters">
    <label for="statement-from">From (SAST)</label>
    <input type="date" id="statement-from" name="from" value="${asked.from}" required />
    <label for="statement-to">To (SAST)</label>
    <input type="date" id="statement-to" name="to" value="${asked.to}" required />
    <label for="statement-format">Format</label>
    <select id="statement-format" name="format">${options}</select>
    <p><button type="submit">Download</button></p>
  </form>`
}

async function formPage(r: PageRequest, accountId: string, asked: Asked,
    problems: readonly string[] = [], status?: number): Promise<Rendered> {
  const account = await r.client.accounts.show({ account_id: accountId })
  const shown = problems.map((p) => html`<p class="error" role="alert">${p}</p>`)
  return {
    title: `Statement of account ${account.account_number}`,
    current: '/partners',
    ...(status === undefined ? {} : { status }),
    body: html`<p>Account ${idLink(`/accounts/${accountId}`, accountId)}</p>
      <p>
        The account's posted transactions over a range of South African days (both included,
        at most ${statement_days_max}, not after today) with opening and closing balances.
        Up to ${statement_inline_lines_max} lines; for more, narrow the range or have the
        account's partner ask for it.
      </p>
      ${shown}${statementForm(accountId, asked)}`,
  }
}

/**
 * `/accounts/<id>/statement`: the form, or with `from`, `to` and `format` the statement's
 * file from `ops.account.statement` (audited) as a download.
 */
export async function statementPage(r: PageRequest,
    accountId: string): Promise<Rendered | Download> {
  const q = r.url.searchParams
  const asked: Asked = {
    from: param(r.url, 'from') ?? '', to: param(r.url, 'to') ?? '',
    format: param(r.url, 'format') ?? 'pdf',
  }
  if (!q.has('from') && !q.has('to') && !q.has('format')) {
    return formPage(r, accountId, { ...asked, from: `${today().slice(0, 8)}01`, to: today() })
  }
  const problems = statementProblems(asked)
  if (problems.length > 0) return formPage(r, accountId, asked, problems, 400)
  try {
    const reply = await r.client.accounts.statement({ account_id: accountId, from: asked.from,
      to: asked.to, format: asked.format as Format })
    if (reply.content === null) throw new Error('ops.account.statement answered no content')
    return { download: { file_name: reply.file_name, content_type: reply.content_type,
      content: Buffer.from(reply.content, 'base64') } }
  } catch (error) {
    if (!(error instanceof BankApiError) || (error.code !== 400 && error.code !== 422)) {
      throw error
    }
    return formPage(r, accountId, asked, [`The bank refused it: ${error.message}`], error.code)
  }
}
