import { sql, type Kysely } from 'kysely'
import { fromSast, toSast } from '../calendar/sa-calendar.ts'
import type { Database } from '../schema.ts'
import {
  card_limits,
  type AuthorizeRequest,
  type CardLimits,
  type DeclineReason,
} from './card-contract.ts'
import { effectiveStatus, pinMatches, type CardRow } from './card-service.ts'

// The checks of an authorization, one at a time (card-network.ts) or many in one batch
// (card-authorizations.ts): the card's status, its PIN, its features and its limits. They
// are pure but for the spending read (spendOf), so that a batch reads the spending of all
// its cards at once and adds each approval to it as it goes. The funds are the ledger's
// check, last.

const atm_mcc = '6011'
const home_country = 'ZAF'

/** What a card has spent in the SAST day, month and year so far. */
export interface Spend {
  day: bigint
  month: bigint
  year: bigint
}

export const nothingSpent = (): Spend => ({ day: 0n, month: 0n, year: 0n })

/** What the checks decided, and what they change on the card (its wrong PINs, a freeze). */
export interface Verdict {
  reason: DeclineReason | undefined
  /** The card's count of wrong PINs after this authorization. */
  wrongPins: number
  /** An auto-lock time has passed: the card becomes frozen now. */
  freeze: boolean
}

/**
 * The verdict on `amount` more for `card`: `total` is what its authorization would then
 * be (the amount, or an increment's authorization with it), for the transaction limit;
 * `r` is absent for an increment (status and limits only).
 */
export function verdictOf(
  card: CardRow,
  r: AuthorizeRequest | null,
  amount: bigint,
  total: bigint,
  spend: Spend,
  now: Date,
  pinKey: Buffer,
): Verdict {
  // No closure made per call: every authorization of a batch is checked here.
  const status = effectiveStatus(card, now)
  const freeze = status === 'frozen' && card.status === 'active'
  const refused = statusRefusal(status)
  if (refused) return { reason: refused, wrongPins: card.wrong_pins, freeze }
  if (!r) {
    const over = exceeds(card.limits, amount, total, spend)
    return { reason: over ? 'limit_exceeded' : undefined, wrongPins: card.wrong_pins, freeze }
  }
  const pin = pinVerdict(card, r, pinKey)
  const reason =
    pin.reason ??
    featureRefusal(card, r) ??
    (exceeds(card.limits, amount, total, spend) ? 'limit_exceeded' : undefined)
  return { reason, wrongPins: pin.wrongPins, freeze }
}

function statusRefusal(status: CardRow['status']): DeclineReason | undefined {
  const reasons: Record<CardRow['status'], DeclineReason | undefined> = {
    active: undefined,
    inactive: 'card_inactive',
    cancelled: 'card_inactive',
    frozen: 'card_frozen',
    stopped: 'card_stopped',
    expired: 'card_expired',
  }
  return reasons[status]
}

/**
 * A PIN given is checked (an ATM needs one); three wrong ones block PIN use until a new
 * PIN is set, and a right one forgets the wrong ones before it. An ATM that sends no PIN is
 * declined without counting a wrong one: nobody guessed.
 */
function pinVerdict(card: CardRow, r: AuthorizeRequest, pinKey: Buffer) {
  const unchanged = card.wrong_pins
  if (r.pin === undefined && r.channel !== 'atm') return { reason: undefined, wrongPins: unchanged }
  if (card.wrong_pins >= card_limits.wrong_pins_max)
    return { reason: 'pin_blocked' as const, wrongPins: unchanged }
  if (r.pin === undefined) return { reason: 'incorrect_pin' as const, wrongPins: unchanged }
  return pinMatches(pinKey, card, r.pin)
    ? { reason: undefined, wrongPins: 0 }
    : { reason: 'incorrect_pin' as const, wrongPins: card.wrong_pins + 1 }
}

/**
 * Domestic or international by the merchant's country (ZAF is domestic); e-commerce, a
 * till (pos) or an ATM by the channel, an ATM also by its MCC (6011); contactless by the
 * entry mode.
 */
function featureRefusal(card: CardRow, r: AuthorizeRequest): DeclineReason | undefined {
  const f = card.features
  const allowed =
    (r.merchant_country === home_country ? f.domestic : f.international) &&
    (r.channel !== 'e_commerce' || f.e_commerce) &&
    (r.channel !== 'pos' || f.pos) &&
    ((r.channel !== 'atm' && r.mcc !== atm_mcc) || f.atm) &&
    (r.entry_mode !== 'contactless' || f.contactless)
  return allowed ? undefined : 'feature_disabled'
}

/**
 * Whether `amount` more would pass a limit: the transaction's (`total`) or the spending of
 * the SAST day, month or year.
 */
function exceeds(limits: CardLimits, amount: bigint, total: bigint, spend: Spend): boolean {
  return (
    passes(limits.transaction_enabled, total - amount, amount, limits.transaction) ||
    passes(limits.daily_enabled, spend.day, amount, limits.daily) ||
    passes(limits.monthly_enabled, spend.month, amount, limits.monthly) ||
    passes(limits.yearly_enabled, spend.year, amount, limits.yearly)
  )
}

/** Whether an enabled limit would be passed by `amount` more on top of `spent`. */
function passes(enabled: boolean, spent: bigint, amount: bigint, limit: number): boolean {
  return enabled && spent + amount > BigInt(limit)
}

export function windowLimited(card: CardRow): boolean {
  const l = card.limits
  return l.daily_enabled || l.monthly_enabled || l.yearly_enabled
}

/**
 * What each card with a day, month or year limit has spent in its SAST windows (the others
 * need not know): what its authorizations hold and have cleared, not what was reversed.
 */
export async function spendOf(
  trx: Kysely<Database>,
  cards: readonly CardRow[],
  now: Date,
): Promise<Map<string, Spend>> {
  const spends = new Map<string, Spend>()
  const ids = cards.filter(windowLimited).map((card) => card.id)
  if (ids.length === 0) return spends
  const today = toSast(now).date
  const day = fromSast(today)
  const month = fromSast(`${today.slice(0, 7)}-01`)
  const year = fromSast(`${today.slice(0, 4)}-01-01`)
  // FILTER belongs to the aggregate (sum), not to the coalesce around it.
  const counted = sql`case when status = 'cleared' then cleared else amount - reversed end`
  const spent = (since: Date) =>
    sql<string>`coalesce(sum(${counted}) filter (where created_at >= ${since}), 0)`
  const rows = await trx
    .selectFrom('card_authorizations')
    .select(['card_id', spent(day).as('day'), spent(month).as('month'), spent(year).as('year')])
    .where('card_id', 'in', ids)
    .where('status', 'in', ['pending', 'cleared'])
    .where('created_at', '>=', year)
    .groupBy('card_id')
    .execute()
  for (const row of rows) {
    spends.set(row.card_id, {
      day: BigInt(row.day),
      month: BigInt(row.month),
      year: BigInt(row.year),
    })
  }
  return spends
}
