import { Conflict, Forbidden, Invalid } from '../errors.ts'
import { advance_runs_max, type JobRunner } from '../jobs/job-runner.ts'
import type { SimulatedNotifier } from '../notify/simulated-notifier.ts'
import { advance_seconds_max, messages_limit_default } from './sandbox-contract.ts'
import type { MovableClock } from './sandbox-clock.ts'

// The sandbox's operations: the bank's clock, read and moved forward, and the messages the
// simulated notifier kept. In production there is no movable clock and the endpoint
// wrapper refuses `ops.sandbox.` subjects before a handler is reached; the checks here
// keep a call that got past it from doing anything.

export class SandboxService {
  /** One advance at a time on this instance: two would walk the same jobs out of order. */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly clock: MovableClock | undefined,
    private readonly jobs: JobRunner,
    private readonly notifier: SimulatedNotifier | undefined,
  ) {}

  async now(): Promise<{ now: string }> {
    const clock = this.movable()
    await clock.refresh()
    return { now: clock.now().toISOString() }
  }

  advance(request: { seconds?: number | undefined; to?: string | undefined }): Promise<{ now: string; jobs_run: number }> {
    const run = this.queue.then(() => this.advanceNow(request))
    this.queue = run.catch(() => undefined)
    return run
  }

  private async advanceNow(request: { seconds?: number | undefined; to?: string | undefined }) {
    const clock = this.movable()
    await clock.refresh()
    const target = targetOf(clock.now(), request)
    const report = await this.jobs.runUntil(target, (at) => clock.moveTo(at))
    if (!report.complete) {
      throw new Conflict(
        `more than ${advance_runs_max} jobs fell due on the way; the clock stopped at ${clock.now().toISOString()}: advance again to go on`,
      )
    }
    await clock.moveTo(target)
    return { now: clock.now().toISOString(), jobs_run: report.jobs_run }
  }

  async messages(request: { limit?: number | undefined; to?: string | undefined }) {
    this.movable()
    if (!this.notifier) return { messages: [] }
    const sent = await this.notifier.list({ limit: request.limit ?? messages_limit_default, ...(request.to !== undefined ? { to: request.to } : {}) })
    return { messages: sent.map((m) => ({ ...m, created_at: m.created_at.toISOString() })) }
  }

  private movable(): MovableClock {
    if (!this.clock) throw new Forbidden('the bank is not in sandbox mode')
    return this.clock
  }
}

/** Where an advance goes: exactly one of `seconds` and `to`, forward, at most 366 days. */
export function targetOf(now: Date, request: { seconds?: number | undefined; to?: string | undefined }): Date {
  if ((request.seconds === undefined) === (request.to === undefined)) {
    throw new Invalid('give exactly one of seconds and to', [
      { field: 'seconds', message: 'give exactly one of seconds and to' },
      { field: 'to', message: 'give exactly one of seconds and to' },
    ])
  }
  if (request.seconds !== undefined) return new Date(now.getTime() + request.seconds * 1000)
  const target = new Date(request.to as string)
  if (target.getTime() < now.getTime()) {
    throw Invalid.field('to', `is before the bank's time ${now.toISOString()}: the clock never moves back`)
  }
  if (target.getTime() - now.getTime() > advance_seconds_max * 1000) {
    throw Invalid.field('to', `is more than 366 days after the bank's time ${now.toISOString()}; advance in steps`)
  }
  return target
}
