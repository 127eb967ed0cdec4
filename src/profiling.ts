import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import path from 'node:path'
import type { Logger } from './logger.ts'

// On-demand CPU profiles of a running service, for `npm run bench -- --profile` and for
// looking at a live instance. Off unless BANK_CPU_PROFILE_DIR is set; then each SIGUSR2
// toggles V8's sampling profiler (through an in-process `node:inspector` session): the
// first starts it, the next stops it and writes `<dir>/service-<pid>-<n>.cpuprofile`,
// which Chrome DevTools (Performance, or the Node DevTools' Profiler) opens. The file is
// written under a temporary name and renamed, so whoever waits for it never reads half.
// SIGUSR2 because Node keeps SIGUSR1 for its inspector.

/** Returns a function that stops listening (undefined when off). */
export function toggleCpuProfileOnSigusr2(log: Logger, dir = process.env.BANK_CPU_PROFILE_DIR): (
    () => void) | undefined {
  if (!dir) return undefined
  let session: Session | undefined
  let written = 0
  // One toggle at a time: a second signal while a profile is being written waits its turn.
  let busy: Promise<void> = Promise.resolve()
  const toggle = async () => {
    if (!session) {
      session = new Session()
      session.connect()
      await session.post('Profiler.enable')
      await session.post('Profiler.start')
      log.info({ dir }, 'CPU profile started (SIGUSR2 again stops and writes it)')
      return
    }
    const { profile } = await session.post('Profiler.stop')
    session.disconnect()
    session = undefined
    fs.mkdirSync(dir, { recursive: true })
    const file = path.join(dir, `service-${process.pid}-${++written}.cpuprofile`)
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(profile))
    fs.renameSync(`${file}.tmp`, file)
    log.info({ file }, 'CPU profile written')
  }
  const onSignal = () => {
    busy = busy.then(toggle).catch((error: unknown) => log.error({ err: error },
      'CPU profile failed'))
  }
  process.on('SIGUSR2', onSignal)
  return () => process.removeListener('SIGUSR2', onSignal)
}
