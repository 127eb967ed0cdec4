// How fast transaction monitoring's sweep evaluates money movements (src/monitoring): never part
// of `npm test`, nothing asserted. On a test bank (BANK_TEST_STORAGE: pglite by default, or
// postgres), with the clock standing still, BENCH_MONITORING_PAYMENTS EFT payouts (2,000) are
// taken through the SDK, 16 in flight, then one sweep evaluates them all (timed), then one more
// finds nothing (timed: the cost of a sweep with nothing new). Two phases:
//   ordinary  the payments spread over 200 accounts, small amounts: no rule hits;
//   alerting  the same over 20 accounts: each account's payments pass the velocity rule's 20
//             an hour, so most movements join an alert (its hardest case: writes per hit).
// Prints one JSON line per phase. The payments themselves do no monitoring work (the sweep
// reads the ledger behind them); the payments' own time is printed beside, not compared.
//
//   node --import tsx bench/monitoring-sweep.ts
import { onboardPartner, startTestBank, type TestBank } from '../test/support/harness.ts'
import { fund, transferBody } from '../test/transfers/helpers.ts'

const payments = Number(process.env.BENCH_MONITORING_PAYMENTS ?? 2_000)
const in_flight = 16

async function phase(tb: TestBank, name: string, accountsCount: number): Promise<void> {
  const p = await onboardPartner(tb, { approve: true })
  const accounts: string[] = []
  for (let i = 0; i < accountsCount; i++) {
    const account = (await p.client.accounts.create({ entity_id: p.rootEntityId })).account_id
    await fund(tb, account, 10_000_000)
    accounts.push(account)
  }
  const sweep = tb.bank.services.monitoringSweep
  await sweep.run()
  const t0 = performance.now()
  await Promise.all(Array.from({ length: in_flight }, async (_, worker) => {
    for (let i = worker; i < payments; i += in_flight) {
      await p.client.accounts.transfer(transferBody(accounts[i % accountsCount]!,
        { amount: 1_000 + i }))
    }
  }))
  const t1 = performance.now()
  const report = await sweep.run()
  const t2 = performance.now()
  await sweep.run()
  const t3 = performance.now()
  console.log(JSON.stringify({ phase: name, storage: process.env.BANK_TEST_STORAGE ?? 'pglite',
    payments, payments_seconds: +((t1 - t0) / 1000).toFixed(2), ...report,
    sweep_seconds: +((t2 - t1) / 1000).toFixed(2),
    movements_per_second: Math.round(report.evaluated / ((t2 - t1) / 1000)),
    idle_sweep_ms: +(t3 - t2).toFixed(1) }))
}

const tb = await startTestBank({ persistent: false })
try {
  await phase(tb, 'ordinary', 200)
  await phase(tb, 'alerting', 20)
} finally {
  await tb.stop()
}
