import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { addDays, fromSast, toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { Database } from '../schema.ts'
import type { BusinessFigures } from '../metrics/business-gauges.ts'
import { businessFigures } from './summary-figures.ts'
import { recentDeliveryStates } from '../webhooks/webhook-store.ts'
import {
  summary_cycles_shown,
  summary_delivery_window,
  summary_minutes,
  type SummaryView,
} from './summary-contract.ts'
import {
  feeIncomeSince,
  jobHealth,
  lastClearingRun,
  moneyTotals,
  paymentsPerMinute,
  pendingEfts,
} from './summary-store.ts'

// `ops.summary`: the operators' overview in one reply, each figure from an aggregate that
// reads an index (summary-store.ts), all of them at once.

export interface SummaryOptions {
  /** The EFT clearing cycles, minutes after 00:00 SAST on business days. */
  cyclesSast: number[]
  /** The wall clock the ledger's row ids are made from (tests may move it). */
  wallClock?: () => number
}

/** The days ahead searched for the next clearing cycles (a long holiday run is at most days). */
const cycle_search_days = 14

export class SummaryService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly calendar: SouthAfricanCalendar,
    private readonly options: SummaryOptions,
  ) {}

  async summary(): Promise<SummaryView> {
    const now = this.clock.now()
    const wallNow = (this.options.wallClock ?? Date.now)()
    // Whole minutes of the clock, the last one the minute now running.
    const minuteEnd = (Math.floor(now.getTime() / 60_000) + 1) * 60_000
    const start = new Date(minuteEnd - summary_minutes * 60_000)
    const today = fromSast(toSast(now).date)
    const [money, pending, fees, perMinute, jobs, deliveries, lastRun] = await Promise.all([
      moneyTotals(this.db),
      pendingEfts(this.db),
      feeIncomeSince(this.db, today, wallNow),
      paymentsPerMinute(this.db, start, summary_minutes, wallNow),
      jobHealth(this.db, now),
      recentDeliveryStates(this.db, summary_delivery_window),
      lastClearingRun(this.db),
    ])
    return {
      now: formatTimestamp(now),
      money: {
        accounts: money.accounts,
        balance_total: money.balance.toString(),
        held_total: money.held.toString(),
        available_total: (money.balance - money.held).toString(),
      },
      payments: {
        pending_eft_count: pending.count,
        pending_eft_amount: pending.amount.toString(),
        fee_income_today: fees.toString(),
        per_minute: perMinute,
        per_minute_from: formatTimestamp(start),
        last_hour: perMinute.reduce((a, b) => a + b, 0),
      },
      jobs,
      webhooks: webhookFigures(deliveries),
      clearing: {
        cycles_sast: this.options.cyclesSast.map(hhmm),
        next_cycles: this.nextCycles(now).map(formatTimestamp),
        last_run: lastRun
          ? {
              cycle: lastRun.key,
              state: lastRun.state,
              finished_at: lastRun.finished_at ? formatTimestamp(lastRun.finished_at) : null,
            }
          : null,
      },
    }
  }

  /** The figures of the business gauges (summary-figures.ts; metrics/business-gauges.ts). */
  figures(): Promise<BusinessFigures> {
    return businessFigures(this.db, this.clock, (this.options.wallClock ?? Date.now)())
  }

  /** The next scheduled cycles after `now`, on business days. */
  private nextCycles(now: Date): Date[] {
    const found: Date[] = []
    let day = toSast(now).date
    for (let i = 0; i < cycle_search_days && found.length < summary_cycles_shown; i++) {
      if (this.calendar.isBusinessDay(day)) {
        for (const minutes of this.options.cyclesSast) {
          const at = fromSast(day, minutes)
          if (at > now && found.length < summary_cycles_shown) found.push(at)
        }
      }
      day = addDays(day, 1)
    }
    return found
  }
}

function hhmm(minutes: number): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`
}

function webhookFigures(states: Record<string, number>): SummaryView['webhooks'] {
  const delivered = states.delivered ?? 0
  const failed = states.failed ?? 0
  const ended = delivered + failed
  return {
    window: summary_delivery_window,
    pending: states.pending ?? 0,
    delivered,
    failed,
    failure_rate: ended === 0 ? 0 : failed / ended,
  }
}
