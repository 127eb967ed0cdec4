import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { iso } from '../support/assertions.ts'

// A database whose sessions run in South African time, as a PostgreSQL set up in
// Johannesburg would by default. Dates the partner sends must mean the same instant
// whatever the database's time zone.

const tb = useTestBank({ persistent: true })
let p: TestPartner

before(async () => {
  await tb.ready
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(tb.bank.database.db)
  const name = rows[0]!.name
  assert.match(name, /^[a-z0-9_]+$/)
  await sql.raw(`alter database "${name}" set timezone to 'Africa/Johannesburg'`).execute(
    tb.bank.database.db)
  // New sessions pick the setting up; a restart replaces every pooled PostgreSQL session.
  await tb.restart()
  // PGlite has one session, which starts in UTC whatever the database says: set it there.
  await sql`set timezone to 'Africa/Johannesburg'`.execute(tb.bank.database.db)
  p = await onboardPartner(tb)
})

test('user timestamps - the database really runs in SAST (guard for the tests below)', async () => {
  const { rows } = await sql<{ zone: string }>`select current_setting('TimeZone') as zone`.execute(tb.bank.database.db)
  assert.equal(rows[0]!.zone, 'Africa/Johannesburg')
})

test('user timestamps - a plain date is midnight UTC of that day on create and update', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  const { userId } = await p.client.users.create(
    userRequest(entityId, {
      date_of_birth: '1985-06-30',
      id_issue_date: '2003-07-01',
      id_type: 'passport',
      id_number: 'A1234567',
      id_issue_expiry_date: '2031-12-31',
    }),
  )
  let { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.date_of_birth, '1985-06-30T00:00:00Z')
  assert.equal(user.id_issue_date, '2003-07-01T00:00:00Z')
  assert.equal(user.id_issue_expiry, '2031-12-31T00:00:00Z')

  await p.client.users.update({ user_id: userId, date_of_birth: '1986-01-01',
    id_issue_date: '2004-02-29', id_issue_expiry_date: '2032-01-01' })
  ;({ user } = await p.client.users.get({ user_id: userId }))
  assert.equal(user.date_of_birth, '1986-01-01T00:00:00Z')
  assert.equal(user.id_issue_date, '2004-02-29T00:00:00Z')
  assert.equal(user.id_issue_expiry, '2032-01-01T00:00:00Z')
})

test('user timestamps - timestamps with a Z or an offset keep their instant', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  const { userId } = await p.client.users.create(
    userRequest(entityId, { date_of_birth: '1985-06-30T00:00:00Z',
      id_issue_date: '2003-07-01T08:00:00+02:00' }),
  )
  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.date_of_birth, '1985-06-30T00:00:00Z')
  assert.equal(user.id_issue_date, '2003-07-01T06:00:00Z')
  assert.equal(user.created_at, iso(tb.clock.now()))
})
