import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { Inclusion, RecordValues } from './jackson.ts'
import type { RecordName } from './sdk-records.ts'

// Real Jackson for the compatibility suite: java/JacksonBridge.java, started once per test
// file with the JDK's single-file source launcher (no build step) and Debian's Jackson jars
// (libjackson2-databind-java). It speaks one JSON line per request; see its header comment.

/** Where Debian installs the Jackson jars. */
const jar_dir = '/usr/share/java'
const jars = ['jackson-databind.jar', 'jackson-core.jar', 'jackson-annotations.jar']
const bridge_source = fileURLToPath(new URL('./java/JacksonBridge.java', import.meta.url))
/** The first answer includes compiling the bridge in memory (about 3 s on a quiet machine). */
const bridge_reply_timeout_ms = 60_000
/** Protocol lines a test may have outstanding at once. */
const bridge_pending_max = 64

export type JavaAvailability = { available: true; classpath: string } | {
  available: false; reason: string }

/** Whether a JDK (the source launcher compiles, so `javac`'s JDK) and the Jackson jars are here. */
export function javaAvailability(): JavaAvailability {
  for (const tool of ['java', 'javac']) {
    const probe = spawnSync(tool, ['-version'], { encoding: 'utf8' })
    if (probe.error || probe.status !== 0) return { available: false,
      reason: `\`${tool}\` is not installed (Debian: default-jdk-headless)` }
  }
  const paths = jars.map((jar) => path.join(jar_dir, jar))
  const missing = paths.filter((jar) => !fs.existsSync(jar))
  if (missing.length > 0) return { available: false,
    reason: `missing ${missing.join(', ')} (Debian: libjackson2-databind-java)` }
  return { available: true, classpath: paths.join(path.delimiter) }
}

/** Whether this run must have Java: in CI, or when BANK_TEST_REQUIRE_JAVA=1. */
export const javaRequired = process.env.CI === 'true' || process.env.BANK_TEST_REQUIRE_JAVA === '1'

export interface BridgeRecord {
  name: string
  components: Array<[string, string]>
}

type Answer = { ok: true; json?: string; records?: BridgeRecord[] } | { ok: false; error: string }

export class JacksonBridge {
  private readonly pending: Array<{ resolve(answer: Answer): void; reject(
    error: Error): void; timer: NodeJS.Timeout }> = []
  private stderr = ''
  private exited: Error | undefined

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4000)))
    createInterface({ input: child.stdout }).on('line', (line) => this.settle(line))
    child.on('exit', (code, signal) => this.fail(`exited (${signal ?? code})`))
    child.on('error', (error) => this.fail(`could not run: ${error.message}`))
    // A write after the bridge died fails with EPIPE; the exit above has rejected the caller.
    child.stdin.on('error', () => {})
  }

  private fail(what: string): void {
    this.exited ??= new Error(`the Jackson bridge ${what}: ${this.stderr.trim() || 'no output'}`)
    for (const waiting of this.pending.splice(0)) (clearTimeout(waiting.timer),
      waiting.reject(this.exited))
  }

  static start(classpath: string): JacksonBridge {
    const child = spawn('java', ['-cp', classpath, bridge_source],
      { stdio: ['pipe', 'pipe', 'pipe'] })
    return new JacksonBridge(child)
  }

  /** The bridge's records as reflection sees them: name, components and their Java types. */
  async records(): Promise<BridgeRecord[]> {
    const answer = await this.ask({ op: 'records' })
    if (!answer.ok || !answer.records) throw new Error(
      `the bridge did not list its records: ${JSON.stringify(answer)}`)
    return answer.records
  }

  /** The bytes (as text) Jackson writes for the record built from `values`. */
  async write(record: RecordName, values: RecordValues,
      inclusion: Inclusion = 'sdk'): Promise<string> {
    const answer = await this.ask({ op: 'write', record, values, include: inclusion })
    if (!answer.ok || answer.json === undefined) throw new Error(
      `Jackson could not write ${record}: ${JSON.stringify(answer)}`)
    return answer.json
  }

  /** Jackson's error reading `json` into the record, or undefined when it reads. */
  async read(record: RecordName, json: string): Promise<string | undefined> {
    const answer = await this.ask({ op: 'read', record, json })
    return answer.ok ? undefined : answer.error
  }

  async stop(): Promise<void> {
    if (this.exited || this.child.exitCode !== null) return
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()))
    this.child.stdin.end() // the bridge ends when its input does
    await exited
  }

  private ask(request: Record<string, unknown>): Promise<Answer> {
    if (this.exited) return Promise.reject(this.exited)
    if (this.pending.length >= bridge_pending_max) return Promise.reject(
      new Error(`more than ${bridge_pending_max} bridge requests at once`))
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Answers come in order: once one is overdue the stream cannot be trusted; stop it.
        reject(new Error(`the Jackson bridge did not answer within ${bridge_reply_timeout_ms} ` +
          `ms: ${this.stderr.trim()}`))
        this.child.kill()
      }, bridge_reply_timeout_ms)
      this.pending.push({ resolve, reject, timer })
      this.child.stdin.write(`${JSON.stringify(request)}\n`)
    })
  }

  private settle(line: string): void {
    const waiting = this.pending.shift()
    if (!waiting) throw new Error(`the Jackson bridge said something unasked: ${line}`)
    clearTimeout(waiting.timer)
    try {
      waiting.resolve(JSON.parse(line) as Answer)
    } catch {
      waiting.reject(
        new Error(`the Jackson bridge answered with something that is not JSON: ${line}`))
    }
  }
}
