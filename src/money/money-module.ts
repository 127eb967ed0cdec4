import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { whole_ledger_bounds, withDatabaseBounds } from '../db/bounds.ts'

// Money as operators move it: deposits, reversals (with the second operator's approval above
// the threshold, audit/dual-control.ts) and `ledger verify`. The ledger moves it (ledger/);
// this module declares the operations (money-contract.ts), which ledger/ cannot hold.
export const moneyModule: Module<object, object> = {
  name: 'money',
  endpoints: (s) => [
    endpoint(contract.operators.accountDeposit, (r, c) => s.dualControl.deposit(c.caller, { account_id: r.account_id, amount: BigInt(r.amount), ref: r.ref })),
    endpoint(contract.operators.transactionReverse, (r, c) => s.dualControl.reverse(c.caller, r)),
    // Its statements read the whole ledger: a bound of their own (db/bounds.ts).
    endpoint(contract.operators.ledgerVerify, (r) =>
      withDatabaseBounds(whole_ledger_bounds, async () => {
        const incremental = r.incremental === true
        const report = await s.audit.withChainCheck(await s.ledger.verify({ incremental }),
          incremental)
        // Kept for the metrics (bank_ledger_verify_ok and its age), clean or not.
        await s.ledger.recordVerify({ ok: report.ok, incremental,
          problems: report.problems.length, finished_at: new Date() })
        return report
      }),
    ),
  ],
}
