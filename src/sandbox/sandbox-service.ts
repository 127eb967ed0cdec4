import { randomUUID } from 'node:crypto'
import { onPartnerClock } from '../clock.ts'
import { assert, Conflict, Forbidden, Invalid, NotFound } from '../errors.ts'
import { advance_runs_max, JobGroupBusy, type JobRunner } from '../jobs/job-runner.ts'
import type { JobView } from '../jobs/jobs-contract.ts'
import type { SimulatedNotifier } from '../notify/simulated-notifier.ts'
import { advance_seconds_max, messages_limit_default, type AdvanceReply } from './sandbox-contract.ts'
import type { MovableClock } from './sandbox-clock.ts'
import { sandbox_advance_job_limits } from './sandbox-limits.ts'

// The sandbox's operations: the bank's clock, read and moved forward, and the messages the
// simulated notifier kept. In production there is no movable clock and the endpoint
// wrapper refuses `ops.sandbox.` subjects before a handler is reached; the checks here
// keep a call that got past it from doing anything.
//
// An advance is a `sandbox.advance` job (src/jobs) whose payload is its target time, so it
// has an id a caller can follow (`detach: true`, `ops.jobs.get`), and an advance whose
// instance dies half-way is taken over by another once its lease lapses and goes on from
// where the clock stands to the same target. One advance runs at a time on any instance.

export const sandbox_advance_job_kind = 'sandbox.advance'
export const sandbox_partner_advance_job_kind = 'sandbox.partner_advance'

/** What the sandbox needs of the partners: whether one exists. */
export interface SandboxPartners {
  exists(partnerId: string): Promise<boolean>
}

export class SandboxService {
  /** One advance at a time on this instance: two would walk the same jobs out of order. */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly clock: MovableClock | undefined,
    private readonly jobs: JobRunner,
    private readonly notifier: SimulatedNotifier | undefined,
    private readonly partners: SandboxPartners,
  ) {
    if (!clock) return
    jobs.register({
      kind: sandbox_partner_advance_job_kind,
      // One advance at a time, the bank's or a partner's: each walks jobs by its clock.
      exclusive: 'sandbox.clock',
      skip_in_advance: true,
      ...sandbox_advance_job_limits,
      run: (job) => this.runPartnerAdvance(String(job.payload.partner_id),
        new Date(String(job.payload.target)), job.id),
    })
    jobs.register({
      kind: sandbox_advance_job_kind,
      // Two advances at once would walk the same jobs out of order, on one instance or two.
      exclusive: 'sandbox.clock',
      skip_in_advance: true,
      // A failed advance (too many jobs on the way) is not run again by itself: the operator
      // advances again. One cut short by a dead instance is still taken over.
      ...sandbox_advance_job_limits,
      run: (job) => this.runAdvance(new Date(String(job.payload.target)), job.id),
    })
  }

  async now(request: { partner_id?: string | undefined } = {}): Promise<{ now: string }> {
    const clock = this.movable()
    await clock.refresh()
    if (request.partner_id !== undefined) await this.knownPartner(request.partner_id)
    return { now: onPartnerClock(request.partner_id, () => clock.now()).toISOString() }
  }

  /** A partner's own clock and the bank's. */
  async partnerNow(partnerId: string): Promise<{ now: string; bank_now: string }> {
    const clock = this.movable()
    await clock.refresh()
    return { now: onPartnerClock(partnerId, () => clock.now()).toISOString(),
      bank_now: onPartnerClock(undefined, () => clock.now()).toISOString() }
  }

  /**
   * Moves the clock here and answers when it is done; 409 when another advance still runs after
   * BANK_JOBS_EXCLUSIVE_WAIT_MS.
   */
  advance(request: AdvanceRequest): Promise<AdvanceReply> {
    const run = this.queue.then(() => request.partner_id === undefined
      ? this.advanceNow(request) : this.advancePartnerNow(request.partner_id, request))
    this.queue = run.catch(() => undefined)
    return run
  }

  /**
   * The same advance, detached (`detach: true`, what `bank sandbox advance` sends): its
   * target is fixed now, the job queued for any instance (after an advance still running)
   * and answered at once; the reply becomes the job's `result` (`ops.jobs.get`).
   */
  async start(request: AdvanceRequest): Promise<JobView> {
    const partner = request.partner_id
    if (partner !== undefined) await this.knownPartner(partner)
    const target = await this.targetOf(request, partner)
    return this.jobs.startNew(partner === undefined ? advanceJob(target)
      : partnerAdvanceJob(partner, target))
  }

  private async advanceNow(request: AdvanceRequest): Promise<AdvanceReply> {
    return this.runJob(advanceJob(await this.targetOf(request, undefined)))
  }

  /** A partner's advance (its own request, or an operator's with its id), answered when done. */
  async advancePartnerNow(partnerId: string, request: AdvanceRequest): Promise<AdvanceReply> {
    await this.knownPartner(partnerId)
    return this.runJob(partnerAdvanceJob(partnerId, await this.targetOf(request, partnerId)))
  }

  private async runJob(job: ReturnType<typeof advanceJob>): Promise<AdvanceReply> {
    const reply = await this.jobs.runNew(job).catch((error: unknown) => {
      if (error instanceof JobGroupBusy) throw new Conflict('an advance of a sandbox clock is ' +
        'running (here or on another instance); advance again when it has ended')
      throw error
    })
    assert(reply, 'an advance has a key of its own')
    return reply as unknown as AdvanceReply
  }

  private async targetOf(request: AdvanceRequest, partner: string | undefined): Promise<Date> {
    const clock = this.movable()
    await clock.refresh()
    return targetOf(onPartnerClock(partner, () => clock.now()), request)
  }

  private async knownPartner(partnerId: string): Promise<void> {
    if (!(await this.partners.exists(partnerId))) throw new NotFound('partner')
  }

  /** A partner's advance's job: its work by its clock, from where its clock stands to `target`. */
  private async runPartnerAdvance(partnerId: string, target: Date,
      jobId: string): Promise<AdvanceReply> {
    const clock = this.movable()
    await clock.refresh()
    const move = (trx: Parameters<MovableClock['movePartnerTo']>[0], at: Date) =>
      clock.movePartnerTo(trx, partnerId, at)
    const report = await this.jobs.runPartnerUntil(partnerId, target, move, jobId)
    const now = () => onPartnerClock(partnerId, () => clock.now())
    if (!report.complete) {
      throw new Conflict(`more than ${advance_runs_max} jobs fell due on the way; the clock ` +
        `stopped at ${now().toISOString()}: advance again to go on`)
    }
    return { now: now().toISOString(), jobs_run: report.jobs_run }
  }

  /** An advance's job: from wherever the clock stands (a resumed run goes on) to `target`. */
  private async runAdvance(target: Date, jobId: string): Promise<AdvanceReply> {
    const clock = this.movable()
    await clock.refresh()
    const report = await this.jobs.runUntil(target, (at) => clock.moveTo(at), jobId)
    if (!report.complete) {
      throw new Conflict(
        `more than ${advance_runs_max} jobs fell due on the way; the clock stopped ` +
          `at ${clock.now().toISOString()}: advance again to go on`,
      )
    }
    await clock.moveTo(target)
    return { now: clock.now().toISOString(), jobs_run: report.jobs_run }
  }

  async messages(request: { limit?: number | undefined; to?: string | undefined }) {
    this.movable()
    if (!this.notifier) return { messages: [] }
    const sent = await this.notifier.list({ limit: request.limit ?? messages_limit_default,
      ...(request.to !== undefined ? { to: request.to } : {}) })
    return { messages: sent.map((m) => ({ ...m, created_at: m.created_at.toISOString() })) }
  }

  private movable(): MovableClock {
    if (!this.clock) throw new Forbidden('the bank is not in sandbox mode')
    return this.clock
  }
}

type AdvanceRequest = { seconds?: number | undefined; to?: string | undefined;
  partner_id?: string | undefined }

function advanceJob(target: Date) {
  return { kind: sandbox_advance_job_kind,
    key: `${target.toISOString()}:${randomUUID().slice(0, 8)}`,
    payload: { target: target.toISOString() } as Record<string, unknown> }
}

function partnerAdvanceJob(partnerId: string, target: Date) {
  return { kind: sandbox_partner_advance_job_kind,
    key: `${partnerId}:${target.toISOString()}:${randomUUID().slice(0, 8)}`,
    payload: { partner_id: partnerId, target: target.toISOString() } as Record<string, unknown> }
}

/** Where an advance goes: exactly one of `seconds` and `to`, forward, at most 366 days. */
export function targetOf(now: Date,
    request: { seconds?: number | undefined; to?: string | undefined }): Date {
  if ((request.seconds === undefined) === (request.to === undefined)) {
    throw new Invalid('give exactly one of seconds and to', [
      { field: 'seconds', message: 'give exactly one of seconds and to' },
      { field: 'to', message: 'give exactly one of seconds and to' },
    ])
  }
  if (request.seconds !== undefined) return new Date(now.getTime() + request.seconds * 1000)
  const target = new Date(request.to as string)
  if (target.getTime() < now.getTime()) {
    throw Invalid.field('to',
      `is before the bank's time ${now.toISOString()}: the clock never moves back`)
  }
  if (target.getTime() - now.getTime() > advance_seconds_max * 1000) {
    throw Invalid.field('to',
      `is more than 366 days after the bank's time ${now.toISOString()}; advance in steps`)
  }
  return target
}
