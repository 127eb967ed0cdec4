import type { Kysely, Migration } from 'kysely'
import { dailyAtSast } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import { runStatements } from '../db/migrations.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import type { LedgerService } from '../ledger/ledger-service.ts'
import { transfer_key_expiry_job_limits } from './transfer-limits.ts'

// Expired clientTxIds. A transfer's key (`transfer_keys`, one row per partner and clientTxId)
// is a duplicate only within BANK_TRANSFER_KEY_WINDOW_MS of its use; after that it counts
// for nothing (a new use takes it over). Kept for ever, the keys would grow with all of
// history, and each payment's insert would touch a random page of an ever larger index (the
// keys are the partners' own UUIDs, in no order). One `transfers.key_expiry` job a day, at
// 03:00 SAST, deletes the keys whose window has passed, in chunks, oldest first; so the
// table holds about a window's worth of keys whatever the ledger's size. Deleting a key
// changes no answer: a duplicate is told by a live key, and the transaction itself stays.

export const transfer_key_expiry_job_kind = 'transfers.key_expiry'
const chunk_max = 10_000

/** The index the expiry walks, oldest key first (0033): a key's `created_at` only grows. */
export const transferKeysCreatedMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, 'create index transfer_keys_created on transfer_keys (created_at);')
  },
}

export class TransferKeyExpiry {
  constructor(
    private readonly ledger: Pick<LedgerService, 'expireKeys'>,
    private readonly clock: Clock,
    jobs: JobRunner,
    private readonly windowMs: number,
  ) {
    jobs.register({
      kind: transfer_key_expiry_job_kind,
      ...transfer_key_expiry_job_limits,
      run: async (job) => ({ deleted: await this.sweep(job.signal) }),
      plan: (now: Date) => dailyAtSast(now, 3 * 60),
    })
  }

  /** Deletes the keys whose window has passed; resolves with how many. */
  async sweep(signal?: AbortSignal): Promise<number> {
    // The same bound as the claim's: a key used before it no longer counts.
    const cutoff = new Date(this.clock.now().getTime() - this.windowMs)
    let total = 0
    for (;;) {
      const deleted = await this.ledger.expireKeys(cutoff, chunk_max)
      total += deleted
      // A run that lost its lease stops; the instance that took it over goes on.
      if (deleted < chunk_max || signal?.aborted) return total
    }
  }
}
