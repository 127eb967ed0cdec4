// Readiness (`/readyz` on the metrics port): whether this instance can do its work now —
// its database answers a query, its NATS connection answers a ping, its job runner polls.
// Each check is given `readiness_timeout_ms`; all run at once, so an answer takes at most
// that long. Liveness (`/healthz`) asks nothing: the process answers, so it is alive.

/** How long each readiness check may take before it counts as not ready. */
export const readiness_timeout_ms = 2_000

/** A check resolves when its part is ready and rejects (or throws) saying why it is not. */
export type ReadinessCheck = () => Promise<void>

export interface Readiness {
  ready: boolean
  /** Each check's outcome: `ok`, or why it is not ready. */
  checks: Record<string, string>
}

/** Runs every check at once, each bounded by `timeoutMs`. */
export async function checkReadiness(checks: Readonly<Record<string, ReadinessCheck>>,
    timeoutMs = readiness_timeout_ms): Promise<Readiness> {
  const names = Object.keys(checks)
  const outcomes = await Promise.all(names.map((name) => outcomeOf(checks[name]!, timeoutMs)))
  const result: Record<string, string> = {}
  names.forEach((name, i) => (result[name] = outcomes[i]!))
  return { ready: outcomes.every((o) => o === 'ok'), checks: result }
}

async function outcomeOf(check: ReadinessCheck, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs)
    timer.unref()
  })
  const answered = (async () => {
    await check()
    return 'ok'
  })().catch((error: unknown) => oneLine(error instanceof Error ? error.message : String(error)))
  try {
    return await Promise.race([answered, late])
  } finally {
    clearTimeout(timer)
  }
}

function oneLine(text: string): string {
  return (text.replace(/[\r\n]+/g, ' ').trim() || 'failed').slice(0, 200)
}

/** The text `/readyz` answers: a first line saying ready or naming what is not, then each check. */
export function readinessText(readiness: Readiness): string {
  const failing = Object.entries(readiness.checks).filter(([, outcome]) => outcome !== 'ok')
  const head = readiness.ready ? 'ready' : `not ready: ${failing.map(([n]) => n).join(', ')}`
  const lines = Object.entries(readiness.checks).map(([name, outcome]) => `${name}: ${outcome}`)
  return `${head}\n${lines.join('\n')}\n`
}
