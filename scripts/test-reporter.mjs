// A node:test reporter for scripts/test.mjs: one JSON line per test file (or per group
// process that failed outside its files), with its storage back end, its counts of passed,
// failed and skipped tests, and its wall time. The runner sums and times them.
//
// scripts/test.mjs runs each test file as a top-level suite named `<path> [<backend>]` of a
// group process (`<backend>-<n>.mjs`); the events of one process arrive together, and a
// suite's own event after those of its tests, so the tests counted since the last top-level
// event belong to the next one.
const backendOf = (name) => /\[(\w+)\]$/.exec(name)?.[1] ?? /(?:^|\/)(\w+)-\d+\.m?js$/.exec(name)?.[1] ?? 'unknown'

export default async function* reporter(source) {
  let counts = { pass: 0, fail: 0, skip: 0 }
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const { data } = event
    const suite = data.details?.type === 'suite'
    if (data.nesting > 0 || !suite) {
      if (!suite) {
        if (data.skip || data.todo) counts.skip++
        else if (event.type === 'test:pass') counts.pass++
        else counts.fail++
      }
      if (data.nesting > 0) continue
    }
    yield `${JSON.stringify({
      name: data.name,
      backend: backendOf(data.name),
      ok: event.type === 'test:pass',
      ms: Math.round(data.details?.duration_ms ?? 0),
      ...counts,
    })}\n`
    counts = { pass: 0, fail: 0, skip: 0 }
  }
}
