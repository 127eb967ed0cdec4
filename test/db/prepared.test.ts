import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect, sql, type RawBuilder } from 'kysely'
import pg from 'pg'
import { openDatabase } from '../../src/db/database.ts'
import { migrations } from '../../src/modules.ts'
import type { Database } from '../../src/schema.ts'
import { inLane, Lane, prepared, preparingPool, thenCommit } from '../../src/db/speed/prepared.ts'
import { storage } from '../support/harness.ts'
import { adminUrl, pgliteSeed } from '../support/templates.ts'

// prepared() marks a statement; on PostgreSQL preparingPool() sends marked statements as
// named prepared statements (one name per distinct text, the same on every connection of
// the pool) and everything else unnamed. What each connection has prepared is read from
// pg_prepared_statements inside that connection. On PGlite the marker is only a comment.

/** A row of pg_prepared_statements (PostgreSQL 14+ counts the plans each one ran with). */
interface PreparedRow {
  name: string
  statement: string
  from_sql: boolean
  runs: number
}

/** What the connection `c` has prepared. */
async function preparedOn(c: Kysely<any>): Promise<PreparedRow[]> {
  const { rows } = await sql<PreparedRow>`
    select name, statement, from_sql, (generic_plans + custom_plans)::int as runs from pg_prepared_statements`.execute(c)
  return rows
}

const backendPid = async (c: Kysely<any>) => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(c)).rows[0]!.pid

if (storage === 'postgres') {
  // A throwaway database of this file, dropped at its end; each test gets a pool of its own.
  const name = `bank_prep_test_${randomBytes(6).toString('hex')}`
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const open: Kysely<any>[] = []

  const admin = async <T>(connectionString: string,
      work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString })
    await client.connect()
    try {
      return await work(client)
    } finally {
      await client.end()
    }
  }

  /** A Kysely on the throwaway database through preparingPool, as openDatabase builds it. */
  const database = (): Kysely<any> => {
    const db =
      new Kysely<any>(
      { dialect: new PostgresDialect({ pool: preparingPool(
      new pg.Pool({ connectionString: url.toString(), max: 2, pipeline: true })) }) })
    open.push(db)
    return db
  }

  /** Runs `work` with a database of its own, destroyed (its connections closed) after. */
  const withDatabase = async (work: (db: Kysely<any>) => Promise<void>) => {
    const db = database()
    try {
      await work(db)
    } finally {
      open.splice(open.indexOf(db), 1)
      await db.destroy()
    }
  }

  before(async () => {
    await admin(adminUrl, (client) => client.query(`create database ${name}`))
    await admin(url.toString(), (client) => client.query(`create table items (id int primary key, label text not null)`))
  })

  after(async () => {
    await Promise.all(open.splice(0).map((db) => db.destroy()))
    await admin(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`))
  })

  test('prepared statements - a marked statement run twice on a connection is prepared there once, named bank_<n>, with its text; an unmarked one is not prepared', async () => {
    await withDatabase((db) =>
      db.connection().execute(async (c) => {
        const marked = (n: number) => prepared(sql<{ n: number }>`select ${n}::int + 1 as marked_probe`)
        const unmarked = (n: number) => sql<{ n: number }>`select ${n}::int * 3 as unmarked_probe`
        assert.deepEqual((await marked(1).execute(c)).rows, [{ marked_probe: 2 }])
        assert.deepEqual((await marked(5).execute(c)).rows, [{ marked_probe: 6 }])
        assert.deepEqual((await unmarked(2).execute(c)).rows, [{ unmarked_probe: 6 }])
        assert.deepEqual((await unmarked(4).execute(c)).rows, [{ unmarked_probe: 12 }])

        const text = marked(0).compile(db).sql
        assert.ok(text.startsWith('/* prepared */ '), text)
        const rows = await preparedOn(c)
        const mine = rows.filter((row) => row.statement === text)
        assert.equal(mine.length, 1, `prepared once on this connection: ${JSON.stringify(rows)}`)
        assert.match(mine[0]!.name, /^bank_\d+$/)
        assert.equal(mine[0]!.from_sql, false,
          'prepared through the protocol, not by a PREPARE statement')
        assert.equal(mine[0]!.runs, 2, 'both runs used the one prepared statement')
        assert.deepEqual(
          rows.filter((row) => row.statement.includes('unmarked_probe')),
          [],
          'the unmarked statement went unnamed',
        )
      }),
    )
  })

  test('prepared statements - two marked texts get two names, and a text has the same name on every connection of the pool', async () => {
    await withDatabase((db) =>
      // Two connections held at once, so that they are two different ones.
      db.connection().execute((first) =>
        db.connection().execute(async (second) => {
          assert.notEqual(await backendPid(first), await backendPid(second),
            'two server connections')
          const a = prepared(sql<{ a: number }>`select ${1}::int as a_probe`)
          const b = prepared(sql<{ b: number }>`select ${1}::int as b_probe`)
          // In opposite orders: names handed out per connection would differ between the two.
          await a.execute(first)
          await b.execute(first)
          await b.execute(second)
          await a.execute(second)

          const nameOf = (rows: PreparedRow[], statement: RawBuilder<unknown>) => {
            const text = statement.compile(db).sql
            const found = rows.filter((row) => row.statement === text)
            assert.equal(found.length, 1, `${text} prepared once: ${JSON.stringify(rows)}`)
            return found[0]!.name
          }
          const onFirst = await preparedOn(first)
          const onSecond = await preparedOn(second)
          assert.notEqual(nameOf(onFirst, a), nameOf(onFirst, b), 'one name per text')
          assert.equal(nameOf(onSecond, a), nameOf(onFirst, a),
            'the first text keeps its name on the other connection')
          assert.equal(nameOf(onSecond, b), nameOf(onFirst, b),
            'the second text keeps its name on the other connection')
        }),
      ),
    )
  })

  test('prepared statements - marked inserts and selects with array parameters return the rows unmarked ones do, each run with its own values', async () => {
    type Item = { id: number; label: string }
    const insert = (items: Item[]) =>
      sql<Item>`insert into items (id, label) select * from unnest(${items.map((i) => i.id)}::int[], ${items.map((i) => i.label)}::text[]) returning id, label`
    const select = (ids: number[]) => sql<Item>`select id, label from items where id = any(${ids}::int[]) order by id`
    const items = (...ids: number[]) => ids.map((id) => ({ id, label: `item ${id}` }))

    await withDatabase((db) =>
      db.connection().execute(async (c) => {
        // Each run of the marked insert brings other rows, and more or fewer of them.
        assert.deepEqual((await prepared(insert(items(1, 2, 3))).execute(c)).rows, items(1, 2, 3))
        assert.deepEqual((await prepared(insert(items(4))).execute(c)).rows, items(4))
        assert.deepEqual((await prepared(insert(items(5, 6, 7, 8, 9))).execute(c)).rows,
          items(5, 6, 7, 8, 9))
        assert.deepEqual((await insert(items(10, 11)).execute(c)).rows, items(10, 11), 'unmarked')

        // Past PostgreSQL's first five (custom) plans of the select, each run with other ids.
        const runs = [[1, 2], [3], [4, 5, 6, 11], [], [7, 10], [9, 8, 42], [2, 4, 6, 8, 10]]
        for (const ids of runs) {
          const marked = (await prepared(select(ids)).execute(c)).rows
          assert.deepEqual(marked, (await select(ids).execute(c)).rows, `ids ${ids}: as unmarked`)
          assert.deepEqual(marked, items(...ids.filter((id) => id <= 11).sort((x, y) => x - y)),
            `ids ${ids}: the rows asked for`)
        }

        // These were prepared statements, run again and again, not unnamed ones.
        const rows = await preparedOn(c)
        const runsOf = (statement: RawBuilder<unknown>) => rows.find(
          (row) => row.statement === statement.compile(db).sql)?.runs
        assert.equal(runsOf(prepared(insert(items(1)))), 3)
        assert.equal(runsOf(prepared(select([1]))), runs.length)
      }),
    )
  })

  /** The labels of these ids, read on a connection of its own (what others see committed). */
  const committed = (ids: number[]) =>
    admin(url.toString(), async (client) => (await client.query<{ id: number }>('select id from items where id = any($1::int[]) order by id', [ids])).rows.map((r) => r.id))

  test('transactions - begin rides with the first statement: both statements are in one transaction, which commits whole', async () => {
    await withDatabase(async (db) => {
      const [first, second] = await db.transaction().execute(async (trx) => {
        const a = await sql<{ at: Date }>`insert into items values (100, 'a') returning now() as at`.execute(trx)
        await sql`select pg_sleep(0.02)`.execute(trx)
        const b = await sql<{ at: Date }>`select now() as at`.execute(trx)
        return [a.rows[0]!, b.rows[0]!]
      })
      // now() is when the transaction began: had the begin not gone before the first
      // statement, each statement would have been a transaction of its own, 20 ms apart.
      assert.equal(second.at.getTime(), first.at.getTime())
      assert.deepEqual(await committed([100]), [100])
    })
  })

  test('transactions - thenCommit: the last statement and the commit go together; the transaction commits whole and the connection is clean after', async () => {
    await withDatabase(async (db) => {
      await db.transaction().execute(async (trx) => {
        await sql`insert into items values (120, 'a')`.execute(trx)
        const { rows } = await thenCommit(prepared(sql<{ id: number }>`insert into items values (121, 'b') returning id`)).execute(trx)
        assert.deepEqual(rows, [{ id: 121 }])
        // Committed with that statement: another connection sees both rows before the transaction's
        // callback returns.
        assert.deepEqual(await committed([120, 121]), [120, 121])
      })
      assert.deepEqual(await committed([120, 121]), [120, 121])
      // The next transaction on the same connections starts afresh.
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await sql`insert into items values (122, 'c')`.execute(trx)
          throw new Error('the caller gives up')
        }),
        /the caller gives up/,
      )
      assert.deepEqual(await committed([122]), [])
    })
  })

  test('transactions - thenCommit: a last statement that fails rolls back the whole transaction, with the statement error', async () => {
    await withDatabase(async (db) => {
      await sql`insert into items values (130, 'there')`.execute(db)
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await sql`insert into items values (131, 'a')`.execute(trx)
          await thenCommit(sql`insert into items values (130, 'again')`).execute(trx)
        }),
        /duplicate key/,
      )
      assert.deepEqual(await committed([130, 131]), [130])
      await sql`insert into items values (132, 'plain')`.execute(db)
      assert.deepEqual(await committed([132]), [132])
    })
  })

  test('transactions - thenCommit: a statement after the committing one is refused, not run outside the transaction', async () => {
    await withDatabase(async (db) => {
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await thenCommit(sql`insert into items values (140, 'a')`).execute(trx)
          await sql`insert into items values (141, 'b')`.execute(trx)
        }),
        /came after the transaction had committed/,
      )
      // What the committing statement wrote is committed; the refused statement never ran.
      assert.deepEqual(await committed([140, 141]), [140])
    })
  })

  test('transactions - a failure rolls back everything, whichever statement fails, and the connection comes back outside any transaction', async () => {
    await withDatabase(async (db) => {
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await sql`insert into items values (110, 'a')`.execute(trx)
          throw new Error('the caller gives up')
        }),
        /the caller gives up/,
      )
      await sql`insert into items values (111, 'b')`.execute(db)
      // The first statement itself fails (a key already there): nothing of the transaction stays.
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await sql`insert into items values (111, 'again')`.execute(trx)
        }),
        /duplicate key/,
      )
      // An empty transaction sends nothing, and leaves no begin behind for the next statement.
      await db.transaction().execute(async () => undefined)
      for (let id = 112; id < 116; id++) await sql`insert into items values (${id}, 'plain')`.execute(db)
      // Each plain statement committed on its own: visible to another connection at once.
      assert.deepEqual(await committed([110, 111, 112, 113, 114, 115]), [111, 112, 113, 114, 115])
      const open = await admin(adminUrl, async (client) =>
        (await client.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = $1 and state like 'idle in transaction%'`, [name])).rows[0]!.n,
      )
      assert.equal(open, 0)
    })
  })

  /**
   * A transaction in `own`'s lane behind `follow`: its backend's pid, after inserting `id` with its
   * commit sent behind.
   */
  const laneWrite = (db: Kysely<any>, own: Lane, follow: Lane | undefined, id: number,
    label = 'lane') =>
    inLane(own, follow, () =>
      db.transaction().execute(async (trx) => {
        const pid = await backendPid(trx)
        await thenCommit(sql`insert into items values (${id}, ${label})`).execute(trx)
        return pid
      }),
    )

  test('lanes - a transaction that follows one whose commit is on the wire runs behind it on its connection; both commit', async () => {
    await withDatabase(async (db) => {
      // Kysely asks for connections in the turn a transaction starts once it is initialized (its
      // first query).
      await sql`select 1`.execute(db)
      const first = new Lane()
      const second = new Lane()
      const ahead = laneWrite(db, first, undefined, 150)
      const behind = laneWrite(db, second, first, 151)
      const [pidAhead, pidBehind] = await Promise.all([ahead, behind])
      assert.equal(pidBehind, pidAhead, 'the follower ran on the connection of the one it followed')
      assert.deepEqual(await committed([150, 151]), [150, 151])
      // Each lane's connection went back to the pool once both were done: the pool (max 2) serves
      // two more at once.
      await db.connection().execute((a) => db.connection().execute(
        async (b) => assert.notEqual(await backendPid(a), await backendPid(b))))
    })
  })

  test('lanes - a follower behind a transaction whose last statement fails still commits on its own, and the failed one rolls back whole', async () => {
    await withDatabase(async (db) => {
      // (Initialized by this first statement: see above.)
      await sql`insert into items values (160, 'there')`.execute(db)
      const first = new Lane()
      const second = new Lane()
      const ahead = inLane(first, undefined, () =>
        db.transaction().execute(async (trx) => {
          const pid = await backendPid(trx)
          await sql`insert into items values (161, 'a')`.execute(trx)
          await thenCommit(sql`insert into items values (160, 'again')`).execute(trx)
          return pid
        }),
      )
      // The follower's first statement goes with its begin, its last with its commit: the
      // failed transaction's rollback, were it sent, would land between them.
      const behind = inLane(second, first, () =>
        db.transaction().execute(async (trx) => {
          await sql`insert into items values (162, 'b')`.execute(trx)
          const pid = await backendPid(trx)
          await thenCommit(sql`insert into items values (163, 'c')`).execute(trx)
          return pid
        }),
      )
      const [failed, pidBehind] = await Promise.allSettled([ahead, behind])
      assert.equal(failed.status, 'rejected')
      assert.match(String((failed as PromiseRejectedResult).reason), /duplicate key/)
      assert.equal(pidBehind.status, 'fulfilled')
      assert.deepEqual(await committed([160, 161, 162, 163]), [160, 162, 163],
        'the failed transaction left nothing; the follower committed whole')
      const open = await admin(adminUrl, async (client) =>
        (await client.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = $1 and state like 'idle in transaction%'`, [name])).rows[0]!.n,
      )
      assert.equal(open, 0, 'no connection was left inside a transaction')
    })
  })

  test('lanes - a follower of a transaction that ended, or that never sent its commit with its last statement, takes a connection of its own', async () => {
    await withDatabase(async (db) => {
      await sql`select 1`.execute(db)
      const done = new Lane()
      await laneWrite(db, done, undefined, 170)
      // The first is over: its connection is back in the pool, and the follower is not behind
      // anything.
      assert.equal(typeof (await laneWrite(db, new Lane(), done, 171)), 'number')
      // A transaction that commits the usual way (no thenCommit) is followed only once it is over.
      const plain = new Lane()
      let finished = false
      const ahead = inLane(plain, undefined, () =>
        db.transaction().execute(async (trx) => {
          await sql`insert into items values (172, 'plain')`.execute(trx)
          await sql`select count(*) from items`.execute(trx)
          finished = true
        }),
      )
      const behind = inLane(new Lane(), plain, async () => {
        const result = await db.transaction().execute(async (trx) => {
          assert.equal(finished, true,
            'the follower started only once the transaction it followed was over')
          return (await sql<{ id: number }>`select id from items where id = 172`.execute(trx)).rows
        })
        return result
      })
      await ahead
      assert.deepEqual(await behind, [{ id: 172 }], 'and saw what it committed')
      assert.deepEqual(await committed([170, 171, 172]), [170, 171, 172])
    })
  })

}

if (storage === 'pglite') {
  test('prepared statements - on PGlite a marked statement runs and returns its rows (the marker is a comment)', async () => {
    // A PGlite of its own from the tests' pre-migrated dump (a pooled one, left open for the
    // next file, would keep a file run on its own from ending), closed at the end.
    const pglite = await PGlite.create('memory://', { loadDataDir: await pgliteSeed() })
    const handle = await openDatabase<Database>({ pglite, pgliteDir: 'memory://', poolMax: 1, migrations })
    try {
      assert.equal(handle.storage, 'pglite')
      const pairs = (ids: number[], labels: string[]) =>
        prepared(sql<{ id: number; label: string }>`select * from unnest(${ids}::int[], ${labels}::text[]) as t(id, label) order by id`)
      assert.deepEqual((await pairs([2, 1], ['b', 'a']).execute(handle.db)).rows, [
        { id: 1, label: 'a' },
        { id: 2, label: 'b' },
      ])
      assert.deepEqual((await pairs([7], ['z']).execute(handle.db)).rows, [{ id: 7, label: 'z' }],
        'the second run with its own values')
      assert.ok(pairs([], []).compile(handle.db).sql.startsWith('/* prepared */ '),
        'the statement sent was the marked one')
    } finally {
      await handle.close()
      await pglite.close()
    }
  })
}
