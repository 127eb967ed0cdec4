import type { TestContext } from 'node:test'
import fc from 'fast-check'

// A property searches until its number of runs or its time budget is spent, whichever comes
// first: on a loaded machine it tries fewer histories rather than running into its file's
// limit (scripts/test.mjs), where the connections it uses close under it and fast-check
// would shrink that into a "counterexample" that is only a time-out. The budget is checked
// before each run begins (a run under way finishes), and BANK_PROPERTY_SECONDS sets it:
// 180 s by default, well within the 600 s file limit, with room to shrink a real failure.
// A budget spent before any run finished is reported as what it is: a time-out.

export const property_seconds_default = 180

export async function checkProperty<Ts>(t: TestContext, property: fc.IAsyncProperty<Ts>,
    params: fc.Parameters<Ts>): Promise<void> {
  const seconds = Number(process.env.BANK_PROPERTY_SECONDS ?? property_seconds_default)
  const details = await fc.check(property, { ...params, interruptAfterTimeLimit: seconds * 1000,
    markInterruptAsFailure: false })
  if (details.numRuns === 0 && details.counterexample === null) {
    throw new Error(`time-out: no run finished within the property's ${seconds} s ` +
      '(BANK_PROPERTY_SECONDS); the machine is too slow for this budget, not the model wrong')
  }
  if (details.failed) throw new Error(fc.defaultReportMessage(details) ?? 'the property failed')
  t.diagnostic(`${details.numRuns} runs` + (details.interrupted
    ? `: the time budget of ${seconds} s was spent before the ${params.numRuns ?? 100} asked`
    : ''))
}
