import type { Kysely } from 'kysely'
import { dailyAtSast } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import { appendAudit, deleteExpiredContent } from './kyc-store.ts'
import { document_retention_job_limits } from './kyc-limits.ts'

// Retention of KYC/KYB documents. The bank keeps the documents of approved applications
// (they are the evidence of its customer due diligence) and deletes the bytes of documents
// of applications that were rejected, or replaced by a later submission, once
// BANK_DOCUMENT_RETENTION_DAYS have passed since the decision (or the replacement). What a
// document was — its name, type, size, SHA-256 and the decisions on it — stays, with the
// audit trail. One `kyc.retention` job a day, at 02:00 SAST, does it in chunks.

export const retention_job_kind = 'kyc.retention'
const chunk_max = 200
const day_ms = 24 * 3600 * 1000

export class DocumentRetention {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    jobs: JobRunner,
    private readonly retentionDays: number,
  ) {
    jobs.register({
      kind: retention_job_kind,
      ...document_retention_job_limits,
      run: async (job) => ({ deleted: await this.sweep(job.signal) }),
      plan: (now: Date) => dailyAtSast(now, 2 * 60),
    })
  }

  /** Deletes what has outlived the retention period; resolves with how many documents. */
  async sweep(signal?: AbortSignal): Promise<number> {
    const now = this.clock.now()
    const before = new Date(now.getTime() - this.retentionDays * day_ms)
    let total = 0
    for (;;) {
      const deleted = await this.db.transaction().execute(async (trx) => {
        const ids = await deleteExpiredContent(trx, before, now, chunk_max)
        for (const id of ids) {
          await appendAudit(trx, { subjectId: id, action: 'document.deleted', actor: 'system',
            at: now, details: { rule: `retention ${this.retentionDays} days`,
            decided_before: before.toISOString() } })
        }
        return ids.length
      })
      total += deleted
      // A run that lost its lease stops; the instance that took it over goes on.
      if (deleted < chunk_max || signal?.aborted) return total
    }
  }
}
