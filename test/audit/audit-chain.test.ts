import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import { onboardPartner, storage, useTestBank, type TestPartner } from '../support/harness.ts'
import { newAccount } from '../transfers/helpers.ts'

// The audit trail is a hash chain that `ledger verify` walks: a row changed behind the
// bank's back (the trigger that keeps the table append-only switched off, as a superuser
// could), removed from the middle or from the end, is reported. Each test tampers with its
// own copy of the trail and puts it back.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  const account = await newAccount(p)
  for (const ref of ['a', 'b', 'c', 'd'])
    await tb.operator.accounts.deposit({ account_id: account, amount: 100, ref })
})

/**
 * Runs `tamper` with the append-only trigger off (as a superuser could), then restores the trail.
 */
async function tampered(
  tamper: string,
  incremental = false,
): Promise<Array<{ kind: string; message: string; audit_id?: string | undefined }>> {
  const db = tb.bank.database.db
  const saved = await sql<{
    rows: string
  }>`select coalesce(json_agg(t), '[]')::text as rows from audit_log t`.execute(db)
  const heads = await db.selectFrom('audit_chain_head').selectAll().execute()
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    await sql.raw(tamper).execute(trx)
  })
  try {
    const report = await tb.operator.ledger.verify({ incremental })
    assert.equal(report.ok, false)
    return report.problems.filter((problem) => problem.kind === 'audit_chain')
  } finally {
    await db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx)
      await sql`delete from audit_log`.execute(trx)
      await sql`insert into audit_log select * from json_populate_recordset(null::audit_log, ${saved.rows[0]!.rows}::json)`.execute(
        trx,
      )
      for (const head of heads) {
        await trx
          .updateTable('audit_chain_head')
          .set({ sha: head.sha })
          .where('id', '=', head.id)
          .execute()
      }
    })
  }
}

test('audit chain - clean: ledger verify walks every row and reports nothing', async () => {
  const report = await tb.operator.ledger.verify({})
  assert.deepEqual(report.problems, [])
  assert.ok(report.audit_rows_checked >= 4)
})

test('audit chain - a row whose fields were changed is reported', async () => {
  const problems = await tampered(
    `update audit_log set actor = 'someone else' where seq = (select min(seq) from audit_log where action = 'account.deposit')`,
  )
  assert.equal(problems.length, 1)
  assert.match(problems[0]!.message, /hash does not match/)
})

test('audit chain - a row removed from the middle breaks the next link', async () => {
  const problems = await tampered(
    `delete from audit_log where seq = (select min(seq) from audit_log where action = 'account.deposit')`,
  )
  assert.equal(problems.length, 1)
  assert.match(problems[0]!.message, /does not follow/)
})

test('audit chain - a row removed from the end is found by the head', async () => {
  const problems = await tampered(
    `delete from audit_log where seq = (select max(seq) from audit_log)`,
  )
  assert.equal(problems.length, 1)
  assert.match(problems[0]!.message, /ends before its recorded head/)
})

test('audit chain - after the tampering is undone, verify is clean again', async () => {
  assert.deepEqual((await tb.operator.ledger.verify({})).problems, [])
})

test('audit chain - an incremental verify finds a changed row after a chain checkpoint, and the checkpoint row changed', async () => {
  const full = await tb.operator.ledger.verify({})
  assert.equal(full.checkpoint_written, true)
  await tb.operator.accounts.deposit({ account_id: await newAccount(p), amount: 100, ref: 'e' })
  const clean = await tb.operator.ledger.verify({ incremental: true })
  assert.deepEqual(clean.problems, [])
  assert.ok(clean.audit_rows_checked < full.audit_rows_checked + 2)
  const after = await tampered(
    `update audit_log set actor = 'someone else' where seq = (select max(seq) from audit_log)`,
    true,
  )
  assert.equal(after.length, 1)
  assert.match(after[0]!.message, /hash does not match/)
  const anchor = await tampered(
    `update audit_log set actor = 'someone else' where seq = (select min(seq) from audit_chain_checkpoints)`,
    true,
  )
  assert.equal(anchor.length, 1)
  assert.match(anchor[0]!.message, /hash does not match/)
  assert.deepEqual((await tb.operator.ledger.verify({ incremental: true })).problems, [])
})

if (storage === 'postgres') {
  test('audit chain - an action while another transaction holds the first chain goes on the next, which verify walks too', async () => {
    const db = tb.bank.database.db
    const account = await newAccount(p)
    let chainOf: number | undefined
    await db.connection().execute(async (held) => {
      await sql`begin`.execute(held)
      try {
        await sql`select sha from audit_chain_head where id = 1 for update`.execute(held)
        const deposit = await tb.operator.accounts.deposit({
          account_id: account,
          amount: 100,
          ref: 'beside',
        })
        const row = await db
          .selectFrom('audit_log')
          .select('chain')
          .where(sql<boolean>`targets @> ${JSON.stringify([deposit.tx_id])}::jsonb`)
          .executeTakeFirstOrThrow()
        chainOf = row.chain
      } finally {
        await sql`rollback`.execute(held)
      }
    })
    assert.equal(chainOf, 2, 'the first head no other transaction held')
    assert.deepEqual((await tb.operator.ledger.verify({})).problems, [])
    const problems = await tampered(
      `delete from audit_log where seq = (select max(seq) from audit_log where chain = 2)`,
    )
    assert.equal(problems.length, 1)
    assert.match(problems[0]!.message, /audit chain 2 ends before its recorded head/)
  })
}
