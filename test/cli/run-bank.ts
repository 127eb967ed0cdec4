import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCli } from '../../src/cli/main.ts'
import type { TestBank } from '../support/harness.ts'

// Runs the operator CLI as an operator would: `runBank` calls the program bin/bank.js runs
// (`runCli` of src/cli/main.ts) in this process, with the child's environment and its stdout
// and stderr caught, so that a hundred runs do not pay a hundred Node start-ups;
// `runBankProcess` starts `node bin/bank.js` itself, for the tests of the process around it
// (exit status, the real stdout and stderr; test/cli/cli-bin.test.ts).

const bankJs = fileURLToPath(new URL('../../bin/bank.js', import.meta.url))

export interface BankRun {
  code: number
  stdout: string
  stderr: string
}

/**
 * The environment of a run: this process's, without any bank settings it may carry, and
 * with an empty data directory, so that nothing is found by accident.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of ['NATS_URL', 'BANK_OPERATOR_TOKEN', 'BANK_DATA_DIR',
    'DATABASE_URL']) delete env[key]
  return { ...env, BANK_DATA_DIR: emptyDir(), ...extra }
}

/** Environment pointing the CLI at the test bank through NATS_URL and BANK_OPERATOR_TOKEN. */
export function bankEnv(tb: TestBank, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cleanEnv({ NATS_URL: tb.natsUrl, BANK_OPERATOR_TOKEN: tb.operatorToken, ...extra })
}

const made: string[] = []

export function emptyDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-cli-'))
  made.push(dir)
  return dir
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

/** `bank <args>` in this process: what the process would write and its exit code. */
export async function runBank(args: string[], env: NodeJS.ProcessEnv): Promise<BankRun> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(args, env, { stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text) })
  return { code, stdout, stderr }
}

/** `node bin/bank.js <args>` as a child process (the TypeScript through tsx, as `npx bank`). */
export function runBankProcess(args: string[], env: NodeJS.ProcessEnv): Promise<BankRun> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bankJs, ...args], { env, cwd: os.tmpdir(), timeout: 60_000 },
        (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        reject(
          new Error(`bank ${args.join(' ')} did not exit normally: ${error.message}\n${stderr}`))
        return
      }
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr })
    })
  })
}

/** Parses a successful run's stdout; fails with the run's output when it did not succeed. */
export function json<T = any>(run: BankRun): T {
  if (run.code !== 0) throw new Error(
    `bank exited ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`)
  return JSON.parse(run.stdout) as T
}
