// One timed phase of a benchmark: `in_flight` workers each send `request` again and again
// until `ms` have passed. Used by bench/run.ts and bench/rails.ts, which print what they need
// of it (throughput, percentiles, errors).

export interface TimedRun {
  /** Each completed request's latency in ms, sorted (empty when not recorded). */
  latencies: number[]
  /** Seconds the phase took. */
  elapsed: number
  errors: number
  /** The latency at a fraction `p` of the sorted latencies, in ms to the microsecond. */
  percentile(p: number): number
}

export async function timedRun(request: () => Promise<unknown>, ms: number, record: boolean,
    inFlight: number): Promise<TimedRun> {
  const latencies: number[] = []
  let errors = 0
  const started = performance.now()
  const deadline = started + ms
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now()
      try {
        await request()
        if (record) latencies.push(performance.now() - t0)
      } catch {
        errors++
      }
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const percentile = (p: number) => Math.round(
    (latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0) * 1000)
    / 1000
  return { latencies, elapsed, errors, percentile }
}
