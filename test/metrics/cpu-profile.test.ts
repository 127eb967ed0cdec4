import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { createLogger } from '../../src/logger.ts'
import { toggleCpuProfileOnSigusr2 } from '../../src/profiling.ts'

// `npm run bench -- --profile` and an operator looking at a live instance: with
// BANK_CPU_PROFILE_DIR set, SIGUSR2 starts a CPU profile and the next one writes it.

/** Waits (up to 10 s) until `file` exists: the profile is renamed into place once written whole. */
async function appears(file: string): Promise<void> {
  for (let i = 0; i < 1000 && !fs.existsSync(file); i++) await new Promise(
    (resolve) => setTimeout(resolve, 10))
  assert.ok(fs.existsSync(file), `${file} was not written`)
}

test('cpu profile - SIGUSR2 starts a profile, the next writes it as a .cpuprofile DevTools opens; unset, nothing listens', async () => {
  assert.equal(toggleCpuProfileOnSigusr2(createLogger('silent'), undefined), undefined,
    'off without a directory')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-cpu-profile-'))
  const listeners = process.listenerCount('SIGUSR2')
  const stop = toggleCpuProfileOnSigusr2(createLogger('silent'), dir)
  try {
    assert.equal(process.listenerCount('SIGUSR2'), listeners + 1)
    process.kill(process.pid, 'SIGUSR2')
    let spin = 0
    for (let i = 0; i < 200_000; i++) spin += Math.sqrt(i) // something for the profiler to sample
    process.kill(process.pid, 'SIGUSR2')
    const file = path.join(dir, `service-${process.pid}-1.cpuprofile`)
    await appears(file)
    const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      nodes: unknown[]; startTime: number; endTime: number }
    assert.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0,
      'the profile has call-tree nodes')
    assert.ok(profile.endTime > profile.startTime)
    assert.ok(spin > 0)
    assert.deepEqual(fs.readdirSync(dir), [path.basename(file)], 'no temporary file is left')
  } finally {
    stop?.()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  assert.equal(process.listenerCount('SIGUSR2'), listeners)
})
