import { attemptOf } from '../client/job-follow.ts'
import type { JobView } from '../jobs/jobs-contract.ts'

// What the CLI says on stderr while it follows a job (src/client/job-follow.ts), so that
// stdout keeps only the outcome for scripts. On a terminal: one line, rewritten in place
// at each poll, with the time spent so far. Otherwise (a pipe, a log file, a test): a
// plain line each time the job's state, attempt or instance changes, so a log tells how
// the job went (taken over by another instance after its own died, say) without a line
// per poll.

export interface ProgressOutput {
  stderr(text: string): void
  /** Whether stderr is a terminal. */
  terminal: boolean
}

/** Rewrites the terminal's current line: back to its start, then clear to its end. */
const rewrite_line = '\r\x1b[K'

export class JobProgress {
  private said = ''
  private pending = false
  private unanswered = false
  private readonly startedMs: number

  constructor(
    private readonly out: ProgressOutput,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.startedMs = nowMs()
  }

  /** The first line: which job, and how to pick it up again after Ctrl-C. */
  following(job: JobView): void {
    this.out.stderr(
      `${job.kind} job ${job.job_id} ${job.state}; following it until it ends ` +
        `(Ctrl-C stops following, not the job: bank jobs get ${job.job_id} --follow)\n`,
    )
  }

  update(job: JobView): void {
    this.unanswered = false
    this.show(`${label(job)}: ${describe(job)}`)
  }

  /** A poll nobody answered: said once per silence on a log, kept on the line on a terminal. */
  noAnswer(error: unknown): void {
    const why = error instanceof Error ? error.message : String(error)
    if (this.unanswered && !this.out.terminal) return
    this.unanswered = true
    this.show(`no answer from the bank (${why}); asking again`)
  }

  /** Ends the terminal's rewritten line, so that what follows starts on a line of its own. */
  end(): void {
    if (this.pending) this.out.stderr('\n')
    this.pending = false
  }

  private show(text: string): void {
    if (this.out.terminal) {
      this.out.stderr(
        `${rewrite_line}${text} · ${Math.round((this.nowMs() - this.startedMs) / 1000)}s`)
      this.pending = true
    } else if (text !== this.said) {
      this.out.stderr(`${text}\n`)
    }
    this.said = text
  }
}

function label(job: JobView): string {
  return `${job.kind} job ${job.job_id.slice(0, 8)}`
}

/** The job's state in words: where it runs and which attempt, or how it ended. */
export function describe(job: JobView): string {
  const attempt = attemptOf(job)
  switch (job.state) {
    case 'queued':
      if (job.attempts > 0 && job.last_error
        !== null) return `${attempt} failed: ${job.last_error}; due again at ${job.due_at}`
      return 'queued; an instance takes it when one is free (after a job of its kind still running)'
    case 'running':
      return `running on ${job.lease_owner ?? 'an instance'} (${attempt})`
    case 'done':
      return job.attempts > 1 ? `done on ${attempt}` : 'done'
    case 'dead':
      return `dead after ${attempt}: ${job.last_error ?? 'no error recorded'}`
  }
}
