// The debit-order phase of `npm run bench` (bench/run.ts): `debit_run_100k_s`, the time of
// one collection run of 100,000 due debit orders on PostgreSQL, from `ops.debit.run` until
// every order is `successful`, then `ledger verify`.
//
// The orders are written straight into the debit tables (creating 100,000 through the API
// would take longer than the run): a partner of its own (no webhook endpoint, so its
// `debit_order.*` events are recorded and not sent), approved through the API, and for
// each order the rows the service writes when a partner registers a once-off mandate, the
// debtor's bank authenticates it and the partner creates a debit order on it (the mandate
// `active` and used by the order, the order `scheduled` with its first history entry and
// its clientTxId key). Every debtor account is the simulated debit rail's always-collecting
// one; every order credits the entity's account (the one its create would choose), due on
// the earliest date a create made now may ask for, and the run is for that date. Not
// written: the mandates' authentication jobs and `mandate.active` events, which are done
// and delivered before any order exists.
import type { NatsConnection } from '@nats-io/transport-node'
import pg from 'pg'
import { OperatorClient } from '../src/client/index.ts'
import { SouthAfricanCalendar } from '../src/calendar/sa-calendar.ts'
import { earliestCollectionDate } from '../src/debit/debit-schedule.ts'

const orders_count = Number(process.env.BENCH_DEBIT_ORDERS ?? 100_000)
const amount = 15_000
const always_collects = '5000000000'

export interface DebitFigures {
  debit_run_100k_s: number
  debit_orders: number
  debit_run_seed_s: number
  ledger_verified_after_debit: boolean
}

/**
 * `measure` wraps the timed part (the run, until every order is final), for bench/meter.ts
 * to read the CPU spent over it.
 */
export async function debitPhase(
  nc: NatsConnection,
  token: string,
  dbUrl: string,
  measure: <T>(timed: () => Promise<T>) => Promise<T> = (timed) => timed(),
): Promise<DebitFigures> {
  // A run of 100,000 takes longer than the bench's other calls may.
  const operator = new OperatorClient({ connection: nc, token, timeoutMs: 30 * 60_000 })
  const partner = await operator.partners.create({
    name: 'Bench Debit Partner (Pty) Ltd',
    email: 'bench-debit@example.com',
    registration_number: '202099999908',
    trading_name: 'Bench Debit',
  })
  const review = await operator.entities.review({ entity_id: partner.root_entity_id,
    decision: 'approve' })
  const accountId = review.account!.account_id
  const { now } = await operator.sandbox.clock()
  const date = earliestCollectionDate(new Date(now), new SouthAfricanCalendar())

  const db = new pg.Client({ connectionString: dbUrl })
  await db.connect()
  try {
    const s0 = performance.now()
    await seed(db, { partnerId: partner.partner_id, entityId: partner.root_entity_id, accountId,
      date, now })
    const seedS = (performance.now() - s0) / 1000

    const { report, counts, elapsed } = await measure(async () => {
      const t0 = performance.now()
      const report = await operator.debit.run({ date })
      // The run replies when it has booked what the rail answered; every order must be final.
      const counts = await statusCounts(db, partner.partner_id)
      return { report, counts, elapsed: (performance.now() - t0) / 1000 }
    })
    if (report.successful !== orders_count || counts.get('successful') !== orders_count) {
      throw new Error(`the debit run collected ${report.successful} of ${orders_count} ` +
        `orders: ${JSON.stringify(Object.fromEntries(counts))}`)
    }
    const credits = await db.query<{ n: string }>(
      `select count(*) as n from transactions where account_id = $1 and tx_type = 'debit_order' and status = 'Successful'`,
      [accountId],
    )
    if (Number(credits.rows[0]!.n) !== orders_count) throw new Error(
      `${credits.rows[0]!.n} debit_order credits for ${orders_count} orders`)
    const verify = await operator.ledger.verify()
    return { debit_run_100k_s: round(elapsed), debit_orders: orders_count,
      debit_run_seed_s: round(seedS), ledger_verified_after_debit: verify.ok }
  } finally {
    await db.end()
  }
}

async function seed(db: pg.Client,
    o: { partnerId: string; entityId: string; accountId: string; date: string; now: string }) {
  const { rows } = await db.query<{ id: string }>('select id from credentials where partner_id = $1 order by created_seq limit 1', [o.partnerId])
  const addedBy = rows[0]!.id
  await db.query('begin')
  await seedMandates(db, o, addedBy)
  await seedOrders(db, o, addedBy)
  await db.query('commit')
  await db.query('analyze debit_mandates, debit_orders, debit_order_history, debit_order_keys')
}

/** The seed's rows (ids and names), and their mandates, active as authentication leaves them. */
async function seedMandates(db: pg.Client, o: { partnerId: string; entityId: string; now: string },
    addedBy: string) {
  await db.query(
    `create temp table bench_debit_seed on commit drop as
       select g, gen_random_uuid() as mandate_id, gen_random_uuid() as order_id,
              'BENCH-M-' || lpad(g::text, 6, '0') as mandate_reference,
              'bench-debit-' || g as client_tx_id,
              'Bench Debtor ' || g as holder
       from generate_series(1, $1::int) g`,
    [orders_count],
  )
  // As a mandate create, its authentication (active) and the order's create leave them.
  await db.query(
    `insert into debit_mandates (id, partner_id, entity_id, mandate_reference, status, account_holder_name, account_number,
       account_type, branch_code, max_amount, frequency, first_collection_date, debtor_email,
       used_by_order, rejection_reason, authentication_due_at, added_by, created_at,
       authenticated_at, decided_at, cancelled_at)
     select mandate_id, $1, $2, mandate_reference, 'active', holder, $3, 'cheque', '250655', 50000, 'once_off', null, null,
       order_id, null, null, $4, $5::timestamptz, $5::timestamptz, $5::timestamptz, null
     from bench_debit_seed order by g`,
    [o.partnerId, o.entityId, always_collects, addedBy, o.now],
  )
}

/** An order under each seeded mandate, scheduled for `o.date`, with its history and key. */
async function seedOrders(db: pg.Client,
    o: { partnerId: string; entityId: string; accountId: string; date: string; now: string },
    addedBy: string) {
  await db.query(
    `insert into debit_orders (id, partner_id, entity_id, account_id, mandate_id, mandate_reference, client_tx_id, amount,
       account_holder_name, account_number, account_type, branch_code, reference, frequency,
       requested_collection_date, collection_date, next_collection_date, end_date, tracking_days,
       notification_email, metadata, status, first_attempt_date, last_attempt_date, processed_at,
       bank_charges, net_amount, credit_tx_id, bank_reference, failure_reason, disputed_at,
       reversal_tx_id, cancelled_at, cancel_reason, added_by, created_at, updated_at)
     select order_id, $1, $2, $3, mandate_id, mandate_reference, client_tx_id, $4, holder, $5, 'cheque', '250655',
       'GYM ' || lpad(g::text, 6, '0'), 'once_off', $6, $6, $6, null, 10, null, null, 'scheduled',
       null, null, null, null, null, null, null, null, null, null, null, null, $7, $8::timestamptz,
       $8::timestamptz
     from bench_debit_seed order by g`,
    [o.partnerId, o.entityId, o.accountId, amount, always_collects, o.date, addedBy, o.now],
  )
  await db.query(
    `insert into debit_order_history (debit_order_id, status, description, bank_reference, collection_date, occurred_at)
     select order_id, 'scheduled', 'scheduled: first collection on ' || $1 || ', once', null, null, $2::timestamptz
     from bench_debit_seed order by g`,
    [o.date, o.now],
  )
  await db.query(
    `insert into debit_order_keys (partner_id, client_tx_id, debit_order_id, created_at)
     select $1, client_tx_id, order_id, $2::timestamptz from bench_debit_seed`,
    [o.partnerId, o.now],
  )
}

async function statusCounts(db: pg.Client, partnerId: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ status: string; n: string }>(
    'select status, count(*) as n from debit_orders where partner_id = $1 group by status',
    [partnerId],
  )
  return new Map(rows.map((r) => [r.status, Number(r.n)]))
}

function round(value: number): number {
  return Math.round(value * 10) / 10
}
