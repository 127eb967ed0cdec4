import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import { upload_part_bytes_max, upload_parts_max } from '../screening/screening-contract.ts'
import { UsageError } from './cli-context.ts'
import type { LocalCommand } from './local-command.ts'
import { operatorClient } from './operator-connection.ts'

// `bank screening load <file>`: a sanctions list file (the UN consolidated list or OFAC's
// SDN list, XML) handed to the bank over NATS. A list is megabytes and a NATS message at
// most one (the bank takes 512 KiB for this operation), so the file goes in parts of 256 KiB
// through `ops.screening.upload`, each naming the whole file's SHA-256; the bank loads it
// when the last part is in. A part is taken once however often it is sent, so a part whose
// reply was lost is simply sent again (the SDK's retries do that).

const file_bytes_max = upload_part_bytes_max * upload_parts_max

export const screeningLoadCommand: LocalCommand = {
  words: 'screening load',
  usage: 'screening load <file>',
  summary: 'Loads a sanctions list file (the UN Security Council consolidated list or OFAC\'s ' +
    'SDN list, their XML formats) as a new version of its list, replacing the active one; ' +
    'every customer is then re-screened in the background.',
  positionals: [{ word: 'file', required: true,
    help: `the list's XML file, as published (at most ${file_bytes_max / 1024 / 1024} MiB)` }],
  flags: [],
  notes: 'The file is sent over NATS in parts of 256 KiB (ops.screening.upload) and read by ' +
    'the bank, which checks it against its SHA-256 and recognises the list by its root ' +
    'element. Prints the load (bank screening lists shows them all).',
  run: async (args, env) => {
    const [file, ...rest] = args.positionals
    if (file === undefined || rest.length > 0) throw new UsageError('give one file')
    const bytes = readFile(file)
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    const parts = Math.ceil(bytes.length / upload_part_bytes_max)
    const upload_id = randomUUID()
    const client = operatorClient(env)
    try {
      let reply
      for (let part = 0; part < parts; part++) {
        const data = bytes.subarray(part * upload_part_bytes_max,
          (part + 1) * upload_part_bytes_max).toString('base64')
        reply = await client.screening.upload({ upload_id, part, parts, sha256, data })
      }
      return { result: { load: reply!.load, rescreen_job_id: reply!.rescreen_job_id } }
    } finally {
      await client.close()
    }
  },
}

function readFile(file: string): Buffer {
  let stat: fs.Stats
  try {
    stat = fs.statSync(file)
  } catch {
    throw new UsageError(`cannot read ${file}`)
  }
  if (!stat.isFile()) throw new UsageError(`${file} is not a file`)
  if (stat.size === 0) throw new UsageError(`${file} is empty`)
  if (stat.size > file_bytes_max) throw new UsageError(
    `${file} is ${stat.size} bytes; a list file may have at most ${file_bytes_max}`)
  return fs.readFileSync(file)
}
