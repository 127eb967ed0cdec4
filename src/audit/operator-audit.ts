import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { Clock } from '../clock.ts'
import type { Operation } from '../contract/operation.ts'
import { withCommitHook, type CommitHook, type RunQuery } from '../db/commit-hooks.ts'
import type { Database } from '../schema.ts'
import { BankError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { appendAuditRow, appendAuditRows, type AuditEntry } from './audit-chain.ts'
import { verifyAuditChain } from './audit-verification.ts'
import { listAudit, type AuditQuery } from './audit-service.ts'

// Every operator action is recorded, by one mechanism: the endpoint wrapper runs each
// audited `ops.` operation through `run`, which sets a commit hook (db/commit-hooks.ts) for
// the handler's duration. The first transaction the handler commits writes the audit row
// just before its `commit`, so the row and the change commit together or not at all. A
// handler that changed nothing in a transaction of its own (a read of a document, an
// action refused) gets its row written after it, in a transaction of its own. A refusal
// (4xx) is recorded too, with its code, type and message as the result.
//
// What a service creates inside the call (a transaction, a credential) joins the row's
// targets through `noteCommitTargets` (db/commit-hooks.ts), which knows nothing of audits.
//
// Which operations are audited: every `ops.` operation except the plain reads listed here.
// A new operation is audited unless someone decides it is a plain read: forgetting costs
// rows, never accountability. Reads of sensitive data (documents, OTPs, the notifier's
// messages, later card details) are audited like changes.
//
// Only operators' operations are: the trail records what people of the bank did. A card
// network connected for real (`net.card.*`, its own credential kind) is a system, not a
// person, and its authorizations, clearings, reversals and refunds write no row here: their
// record is the authorization rows, the ledger and the events they write. The sandbox's
// simulator of the network (`ops.sandbox.card.*`) is an operator playing the network, and its
// calls are audited like every operator action.

const unaudited_reads: ReadonlySet<string> = new Set([
  'ops.account.list',
  'ops.account.show',
  'ops.account.transactions',
  'ops.approvals.list',
  'ops.audit.list',
  'ops.credential.list',
  'ops.credential.list_card_networks',
  'ops.debit.list',
  'ops.entity.list',
  'ops.jobs.get',
  'ops.jobs.list',
  'ops.kyb.list',
  'ops.kyb.show',
  'ops.kyc.list',
  'ops.kyc.show',
  'ops.ledger.verify',
  // Monitoring's lists (rules, alerts, cases, reports filed); a case (the customer's money) and a
  // report's XML are audited.
  'ops.monitoring.alerts',
  'ops.monitoring.cases',
  'ops.monitoring.reports',
  'ops.monitoring.rules',
  'ops.partner.list',
  'ops.partner.nats_users',
  'ops.payment.pending',
  // The rail's lists (ids, counts, amounts, reasons); `ops.rails.message` is audited: it can
  // hand out a whole file of customers' names and account numbers.
  'ops.rails.messages',
  'ops.rails.refusals',
  'ops.rails.unanswered',
  'ops.sandbox.clock',
  // The lists' loads (dates, counts, who loaded them); a name screened by hand is audited.
  'ops.screening.lists',
  'ops.summary',
  'ops.webhook.deliveries',
])

/**
 * Request fields whose values are never written to the trail (matched in any case, anywhere in the
 * name).
 */
const secret_field = /token|secret|password|passphrase|pin|otp|creds|seed|key|pan|cvv/i
const summary_text_max = 200
/** The most audit-chain problems one `ledger verify` lists. */
const chain_problems_max = 1000
const summary_items_max = 20

/** Whether a call of the operation writes an operator audit row: `ops.` ones but plain reads. */
export function isAudited(operation: Operation): boolean {
  return operation.permission === 'operator' && !unaudited_reads.has(operation.subject)
}

/** The action's name in the trail: the subject after `ops.` (`account.deposit`). */
export function auditAction(operation: Operation): string {
  return operation.subject.replace(/^ops\./, '')
}

export interface AuditedCall {
  run<T>(
    caller: Caller,
    request: unknown,
    subjectId: string | null,
    handler: () => Promise<T>,
  ): Promise<T>
}

export class OperatorAudit {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** The audit of one operation's calls, or undefined for a plain read. */
  forOperation(operation: Operation): AuditedCall | undefined {
    if (!isAudited(operation)) return undefined
    const action = auditAction(operation)
    const run = async <T>(
      caller: Caller,
      request: unknown,
      subjectId: string | null,
      handler: () => Promise<T>,
    ): Promise<T> => {
      const pending = new PendingAudit(this.clock, {
        action,
        actor: caller.credentialId,
        actorName: caller.label,
        details: summarize(request) as Record<string, unknown>,
      })
      idsIn(request, pending.targets)
      if (subjectId) pending.targets.add(subjectId)
      let result: T
      try {
        result = await withCommitHook(pending, handler)
      } catch (error) {
        if (error instanceof BankError && error.code < 500) {
          await this.append(
            pending.entry(
              `${error.code} ${error.type}: ${error.message.slice(0, summary_text_max)}`,
            ),
          ).catch((failure) => {
            this.log.warn(
              { err: failure, action },
              'a refused operator action could not be written to the audit trail',
            )
          })
        }
        throw error
      }
      if (!pending.written) {
        idsIn(result, pending.targets)
        await this.append(pending.entry('ok'))
      }
      return result
    }
    return { run }
  }

  /**
   * `bank ledger verify`: the ledger's report with the audit chain's check added — the trail
   * is chained like the ledger, and checked with it (the ledger knows nothing of audits);
   * from the chains' checkpoints when `incremental` (audit-verification.ts).
   */
  async withChainCheck<R extends { ok: boolean; problems: object[] }>(
    report: R,
    incremental = false,
  ) {
    const chain = await verifyAuditChain(this.db, chain_problems_max, incremental)
    const problems = chain.problems.map((p) => ({
      kind: 'audit_chain',
      ...(p.audit_id ? { audit_id: p.audit_id } : {}),
      message: p.message,
    }))
    return {
      ...report,
      ok: report.ok && problems.length === 0,
      audit_rows_checked: chain.rows,
      problems: [...report.problems, ...problems],
    }
  }

  /** `bank audit list`: the trail, filtered and paged (audit-service.ts). */
  list(request: AuditQuery) {
    return listAudit(this.db, request)
  }

  private append(entry: AuditEntry): Promise<void> {
    return this.db
      .transaction()
      .execute((trx) => appendAuditRow((query) => trx.executeQuery(query), entry))
  }
}

/** One operator action's row, waiting for the first transaction of its handler to commit. */
class PendingAudit implements CommitHook {
  readonly targets = new Set<string>()
  written = false
  /** The transaction writing the row, until it commits or fails. */
  private writingOn: RunQuery | undefined

  get done(): boolean {
    return this.written
  }

  constructor(
    private readonly clock: Clock,
    private readonly fields: {
      action: string
      actor: string
      actorName: string
      details: Record<string, unknown>
    },
  ) {}

  entry(result: string): AuditEntry {
    return {
      id: randomUUID(),
      at: this.clock.now(),
      subjectId: null,
      action: this.fields.action,
      actor: this.fields.actor,
      actorName: this.fields.actorName,
      targets: [...this.targets],
      details: this.fields.details,
      result,
    }
  }

  /** The rows of a group's members go in one statement (audit-chain.ts appendAuditRows). */
  readonly writeTogether = writePendingAudits

  async beforeCommit(run: RunQuery): Promise<void> {
    await writePendingAudits(run, [this])
  }

  /**
   * Its row, marked as being written, unless it is written or being written: once per
   * action, the first transaction carries the row (another running at the same time in the
   * same handler leaves it to the first).
   */
  claim(run: RunQuery): AuditEntry | undefined {
    if (this.written || this.writingOn) return undefined
    this.writingOn = run
    return this.entry('ok')
  }

  failed(run: RunQuery): void {
    if (this.writingOn === run) this.writingOn = undefined
  }

  note(ids: readonly string[]): void {
    for (const id of ids) this.targets.add(id)
  }

  committed(run: RunQuery): void {
    if (this.writingOn === run) {
      this.written = true
      this.writingOn = undefined
    }
  }
}

/** Writes the rows of actions committing in one transaction, together. */
async function writePendingAudits(run: RunQuery, hooks: readonly CommitHook[]): Promise<void> {
  const entries = hooks.flatMap((hook) =>
    hook instanceof PendingAudit ? (hook.claim(run) ?? []) : [],
  )
  await appendAuditRows(run, entries)
}

/** The request as the trail keeps it: secrets replaced, long texts and lists cut short. */
function summarize(value: unknown, depth = 0): unknown {
  if (typeof value === 'string')
    return value.length > summary_text_max ? `${value.slice(0, summary_text_max)}…` : value
  if (typeof value === 'bigint') return value.toString()
  if (typeof value !== 'object' || value === null) return value
  if (depth >= 3) return '…'
  if (Array.isArray(value)) {
    const items = value.slice(0, summary_items_max).map((item) => summarize(item, depth + 1))
    return value.length > summary_items_max
      ? [...items, `… ${value.length - summary_items_max} more`]
      : items
  }
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue
    out[key] =
      secret_field.test(key) && !key.endsWith('_id') ? '[redacted]' : summarize(item, depth + 1)
  }
  return out
}

/**
 * Every id a request or a reply names at its top level: `<name>_id` fields, and `<name>_ids` lists.
 */
function idsIn(value: unknown, into: Set<string>): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return
  for (const [key, item] of Object.entries(value)) {
    if (!key.endsWith('_id') && !key.endsWith('_ids')) continue
    if (typeof item === 'string' && item !== '') into.add(item)
    else if (Array.isArray(item))
      for (const id of item.slice(0, summary_items_max)) if (typeof id === 'string') into.add(id)
  }
}
