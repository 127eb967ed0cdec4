import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { after, test } from 'node:test'
import { onboardPartner, useTestBank } from '../support/harness.ts'
import { bankEnv, removeTempDirs, type BankRun } from './run-bank.ts'

// `npm test` runs the other CLI tests against a compiled bundle of the CLI (see run-bank.ts);
// this file runs bin/bank.js itself, the TypeScript through tsx, as `npx bank` does.

const bankJs = fileURLToPath(new URL('../../bin/bank.js', import.meta.url))
const tb = useTestBank()
after(() => removeTempDirs())

function runBin(args: string[], env: NodeJS.ProcessEnv): Promise<BankRun> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bankJs, ...args], { env, cwd: os.tmpdir(), timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error)
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr })
    })
  })
}

test('cli - bin/bank.js runs the CLI through tsx and reaches the bank', async () => {
  const partner = await onboardPartner(tb)
  const run = await runBin(['partner', 'list'], bankEnv(tb))
  assert.equal(run.code, 0, run.stderr)
  const listed = JSON.parse(run.stdout) as { partners: { partner_id: string }[] }
  assert.deepEqual(listed.partners.map((p) => p.partner_id), [partner.partnerId])
  assert.deepEqual(listed, await tb.operator.partners.list())
})

test('cli - bin/bank.js with an unknown command exits 2 with the usage', async () => {
  const run = await runBin(['frobnicate'], bankEnv(tb))
  assert.equal(run.code, 2)
  assert.match(run.stderr, /^unknown command: /)
  assert.match(run.stderr, /usage: bank <command>/)
})
