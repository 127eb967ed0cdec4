import type { Kysely } from 'kysely'
import type { Database } from '../schema.ts'
import { auditEntryOf, auditSha } from './audit-chain.ts'
import type { AuditRow } from './audit-tables.ts'

// The audit trail's part of `ledger verify`: every chain walked and checked against its
// head. A full walk reads every row; a clean one records, per chain, the last row it
// checked (audit_chain_checkpoints). An incremental walk reads each chain from that row on:
// the row must still hash to what was recorded, and every later row must link to it, so a
// row changed, removed or inserted at or after the checkpoint is found; a row before it is
// checked by the next full walk. Within a chain, rows are in commit order (audit-chain.ts),
// so no row of a chain commits below its checkpoint later.

export interface AuditChainReport {
  rows: number
  problems: Array<{ audit_id: string; message: string }>
}

const page_rows = 5000

interface ChainEnd {
  seq: string
  sha: string
}

type Report = (auditId: string, message: string) => void

/** Walks the chains (from their checkpoints when `incremental` and there are some). */
export async function verifyAuditChain(
  db: Kysely<Database>,
  problemsMax: number,
  incremental = false,
): Promise<AuditChainReport> {
  const problems: AuditChainReport['problems'] = []
  const report: Report = (audit_id, message) => {
    if (problems.length < problemsMax) problems.push({ audit_id, message })
  }
  const checkpoints = incremental ? await chainCheckpoints(db) : new Map<number, ChainEnd>()
  const heads = await db.selectFrom('audit_chain_head').selectAll().orderBy('id').execute()
  const walked =
    checkpoints.size > 0
      ? await walkFromCheckpoints(db, heads, checkpoints, report)
      : await walkAll(db, report)
  for (const head of heads) {
    if (head.sha !== (walked.ends.get(head.id)?.sha ?? '')) {
      report(
        '',
        `audit chain ${head.id} ends before its recorded head (rows were removed from its end)`,
      )
    }
  }
  if (problems.length === 0) await writeCheckpoints(db, walked.ends)
  return { rows: walked.rows, problems }
}

/** Every row in `seq` order: every row's hash, every link. */
async function walkAll(db: Kysely<Database>, report: Report) {
  const ends = new Map<number, ChainEnd>()
  let rows = 0
  for (let after = '0'; ;) {
    const page = await db
      .selectFrom('audit_log')
      .selectAll()
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(page_rows)
      .execute()
    for (const row of page) {
      rows++
      checkRow(row, ends.get(row.chain)?.sha ?? '', report)
      ends.set(row.chain, { seq: String(row.seq), sha: row.sha })
    }
    if (page.length < page_rows) break
    after = String(page[page.length - 1]!.seq)
  }
  return { rows, ends }
}

/** Each chain from its checkpoint's row (a chain without one, from its start). */
async function walkFromCheckpoints(
  db: Kysely<Database>,
  heads: ReadonlyArray<{ id: number }>,
  checkpoints: Map<number, ChainEnd>,
  report: Report,
) {
  const ends = new Map<number, ChainEnd>()
  let rows = 0
  for (const { id: chain } of heads) {
    rows += await walkChain(db, chain, checkpoints.get(chain), ends, report)
  }
  return { rows, ends }
}

/** One chain from its checkpoint's row, which must still have its hash; the rows read. */
async function walkChain(
  db: Kysely<Database>,
  chain: number,
  checkpoint: ChainEnd | undefined,
  ends: Map<number, ChainEnd>,
  report: Report,
): Promise<number> {
  let rows = 0
  let prev: string | null = checkpoint ? null : ''
  let anchored = !checkpoint
  for (let from = checkpoint?.seq ?? '0'; ;) {
    const page = await chainPage(db, chain, from)
    for (const row of page) {
      rows++
      if (checkpoint && String(row.seq) === checkpoint.seq) {
        anchored = true
        if (row.sha !== checkpoint.sha) report(row.id, moved_checkpoint)
      }
      checkRow(row, prev, report)
      prev = row.sha
      ends.set(chain, { seq: String(row.seq), sha: row.sha })
    }
    if (page.length < page_rows) break
    from = String(BigInt(page[page.length - 1]!.seq) + 1n)
  }
  if (!anchored) report('', `audit chain ${chain}: the row the last verify checked up to is gone`)
  return rows
}

const moved_checkpoint = 'the row the last verify checked up to no longer has the hash it had then'

function chainPage(db: Kysely<Database>, chain: number, from: string) {
  return db
    .selectFrom('audit_log')
    .selectAll()
    .where('chain', '=', chain)
    .where('seq', '>=', from)
    .orderBy('seq')
    .limit(page_rows)
    .execute()
}

/** A row's link to the one before it on its chain (unless `prev` is null) and its own hash. */
function checkRow(row: AuditRow, prev: string | null, report: Report): void {
  if (prev !== null && row.prev_sha !== prev) {
    report(
      row.id,
      'does not follow the row before it in its audit chain (a row was removed or reordered)',
    )
  }
  if (auditSha(row.prev_sha, auditEntryOf(row)) !== row.sha) {
    report(row.id, 'its hash does not match its fields (the row was changed)')
  }
}

async function chainCheckpoints(db: Kysely<Database>): Promise<Map<number, ChainEnd>> {
  const rows = await db.selectFrom('audit_chain_checkpoints').selectAll().execute()
  return new Map(rows.map((row) => [row.chain, { seq: String(row.seq), sha: row.sha }]))
}

async function writeCheckpoints(db: Kysely<Database>, ends: Map<number, ChainEnd>) {
  if (ends.size === 0) return
  const at = new Date()
  const values = [...ends].map(([chain, end]) => ({ chain, ...end, verified_at: at }))
  await db
    .insertInto('audit_chain_checkpoints')
    .values(values)
    .onConflict((oc) =>
      oc.column('chain').doUpdateSet((eb) => ({
        seq: eb.ref('excluded.seq'),
        sha: eb.ref('excluded.sha'),
        verified_at: eb.ref('excluded.verified_at'),
      })),
    )
    .execute()
}
