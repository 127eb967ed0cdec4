import { sast_offset_ms } from '../calendar/sa-calendar.ts'
import { BankApiError } from '../client/transport.ts'
import { accountPage } from './console-accounts.ts'
import { refusal, type Problems } from './console-account-sections.ts'
import { rand, type Html } from './console-html.ts'
import { doneAt, isUuid, type Ops, type PageRequest, type Rendered, type Reply } from './console-kit.ts'
import { centsOf, FormError } from './console-sandbox.ts'

// The account page's legal-hold and closure forms (`ops.account.hold.place`,
// `ops.account.hold.release`, `ops.account.close`; each audited by the bank). Done, each
// redirects to the account page with a notice of what happened. A mistake in the form, or
// the bank's refusal of it (400, 422: an amount beyond what is available, a past expiry,
// the obstacles to a closure), is the account page again with the message beside the form,
// the typed values kept, under the refusal's status; anything else is the console's error page.

type CloseRequest = Parameters<Ops['accounts']['close']>[0]
type Closed = Reply<Ops['accounts']['close']>

/** The page again with the refusal in a section; other errors go on to the error page. */
async function refused(r: PageRequest, accountId: string, error: unknown, what: string,
    section: 'holds' | 'close', form?: URLSearchParams): Promise<Rendered> {
  let shown: Html
  let status: number
  if (error instanceof FormError) {
    [shown, status] = [refusal(what, error.message), 400]
  } else if (error instanceof BankApiError && (error.code === 400 || error.code === 422)) {
    [shown, status] = [refusal(what, error.message, error.details), error.code]
  } else {
    throw error
  }
  const problems: Problems = { [section]: shown, status, ...(form ? { form } : {}) }
  return accountPage(r, accountId, problems)
}

/**
 * A time typed in SAST (`2027-01-31T17:00`, as a datetime-local field sends it; seconds
 * optional, a space for the T) as the UTC timestamp the bank takes; blank → undefined.
 */
export function expiryOf(text: string | null): string | undefined {
  const typed = (text ?? '').trim()
  if (!typed) return undefined
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?$/.exec(typed)
  const local = m ? `${m[1]}T${m[2]}${m[3] ?? ':00'}` : ''
  const ms = Date.parse(`${local}Z`) - sast_offset_ms
  // Date.parse rolls 30 February over to March: a real time reads back as typed.
  if (!m || Number.isNaN(ms) || new Date(ms + sast_offset_ms).toISOString().slice(0, 19)
    !== local) {
    throw new FormError(`expires: "${typed}" is not a time; give a SAST date and time, ` +
      'e.g. 2027-01-31T17:00')
  }
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** Places a legal hold of the form's rand amount, reference and optional expiry. */
export async function placeHold(r: PageRequest, form: URLSearchParams,
    accountId: string): Promise<string | Rendered> {
  try {
    const expires = expiryOf(form.get('expires_at'))
    const hold = await r.client.accounts.placeHold({
      account_id: accountId,
      amount: centsOf(form.get('amount')),
      reference: form.get('reference')?.trim() ?? '',
      ...(expires ? { expires_at: expires } : {}),
    })
    return doneAt(`/accounts/${accountId}`,
      `Legal hold of ${rand(hold.amount)} placed (${hold.reference}).`)
  } catch (error) {
    return refused(r, accountId, error, 'The hold was not placed', 'holds')
  }
}

/** Releases a hold, or asks a second operator to when it is above the threshold. */
export async function releaseHold(r: PageRequest, form: URLSearchParams, accountId: string,
    holdId: string): Promise<string | Rendered> {
  const path = `/accounts/${accountId}`
  try {
    const done = await r.client.accounts.releaseHold({ hold_id: holdId,
      reason: form.get('reason')?.trim() ?? '' })
    const what = `legal hold of ${rand(done.hold.amount)} (${done.hold.reference})`
    if (done.status === 'released') return doneAt(path, `The ${what} is released.`)
    return doneAt(path, `The release of the ${what} waits for a second operator's ` +
      'approval (Approvals page); the money stays held until then.')
  } catch (error) {
    return refused(r, accountId, error, 'The hold was not released', 'holds')
  }
}

/** The close request the form asks for: its reason and the payout chosen. */
export function closeRequestOf(form: URLSearchParams, accountId: string): CloseRequest {
  const get = (name: string) => form.get(name)?.trim() ?? ''
  if (form.get('confirm') !== 'yes') {
    throw new FormError('tick "I mean to close this account for good" to close it')
  }
  const request: CloseRequest = { account_id: accountId, reason: get('reason') }
  const payout = get('payout')
  if (payout === 'account') {
    const to = get('pay_to_account_id')
    if (!isUuid(to)) throw new FormError('choose the account of the same customer to pay to')
    return { ...request, pay_to_account_id: to }
  }
  if (payout === 'eft') {
    return { ...request, pay_by_eft: { account_number: get('eft_account_number'),
      branch_code: get('eft_branch_code'), name: get('eft_name'), ref: get('eft_ref') } }
  }
  if (payout !== 'none') throw new FormError('choose where the balance goes')
  return request
}

async function closedNotice(r: PageRequest, closed: Closed, request: CloseRequest) {
  const payout = closed.payout
  if (!payout) return 'The account is closed; it had no balance to pay out.'
  if (payout.payment_type === 'INTERNAL') {
    const to = await r.client.accounts.show({ account_id: request.pay_to_account_id! })
    return `The account is closed; its balance of ${rand(payout.amount)} was paid to ` +
      `account ${to.account_number} (${payout.status}).`
  }
  const eft = request.pay_by_eft!
  return `The account is closed; its balance of ${rand(payout.amount)} goes by EFT to ` +
    `${eft.name} (${eft.account_number}) with the next clearing cycle (${payout.status}).`
}

/** Closes the account with the form's reason and payout; the obstacles when refused. */
export async function closeAccount(r: PageRequest, form: URLSearchParams,
    accountId: string): Promise<string | Rendered> {
  try {
    const request = closeRequestOf(form, accountId)
    const closed = await r.client.accounts.close(request)
    return doneAt(`/accounts/${accountId}`, await closedNotice(r, closed, request))
  } catch (error) {
    return refused(r, accountId, error, 'The bank did not close the account', 'close', form)
  }
}

