import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
// @ts-expect-error: a plain ES module of the test runner, without types
import { testsIn, unreported, unreportedText } from '../../scripts/test-accounting.mjs'

// What `npm test` counts when a group process is stopped at its time limit or dies: the files
// that never reported are failures, with the number of their tests that did not run, so the
// closing line cannot say "6 failed" while about 250 tests never ran (issue 30).

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-accounting-'))
const write = (name: string, text: string) => {
  fs.writeFileSync(path.join(dir, name), text)
  return path.join(dir, name)
}
const reported = write('reported.test.ts', "test('a', () => {})\n")
const stopped = write(
  'stopped.test.ts',
  "test('a', () => {})\n  test('b', async () => {})\nit('c', () => {})\n",
)
const looped = write('looped.test.ts', "for (const x of [1, 2]) test(`case ${x}`, () => {})\n")
const relative = (file: string) => path.basename(file)

test('test accounting - the files of a group that never reported are named, each with its tests', () => {
  const groups = [{ backend: 'pglite', files: [reported, stopped, looped] }]
  const records = [{ name: 'reported.test.ts [pglite]', pass: 1, fail: 0, skip: 0 }]
  const silent = unreported(groups, records, relative)
  assert.deepEqual(silent, [
    { file: 'stopped.test.ts', backend: 'pglite', tests: 3 },
    // Tests made in a loop are not counted one by one: the file counts as one.
    { file: 'looped.test.ts', backend: 'pglite', tests: 1 },
  ])
  assert.match(unreportedText(silent), /2 file\(s\) never reported .*: 4 test\(s\) in them did not run/)
})

test('test accounting - a file that reported on one back end and not the other is counted on that one only', () => {
  const groups = [
    { backend: 'pglite', files: [stopped] },
    { backend: 'postgres', files: [stopped] },
  ]
  const silent = unreported(groups, [{ name: 'stopped.test.ts [pglite]' }], relative)
  assert.deepEqual(silent, [{ file: 'stopped.test.ts', backend: 'postgres', tests: 3 }])
  assert.equal(testsIn(reported), 1)
})
