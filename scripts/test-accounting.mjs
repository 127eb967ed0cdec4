import fs from 'node:fs'

// What scripts/test.mjs counts of the files that never reported: a group process stopped at its
// time limit, or dead, leaves its remaining files without a line from the reporter
// (scripts/test-reporter.mjs). Those files' tests did not run, and the closing line counts them
// as failed and says so, instead of counting only the failures that reported.
/**
 * The planned files that never reported (their process was stopped at its time limit or died
 * before they ran or finished), each with the number of tests it holds: counted as failed, so
 * the closing line says how much did not run instead of only the failures that reported.
 */
export function unreported(groups, records, relative) {
  const reported = new Set(records.map((r) => r.name))
  return groups.flatMap((group) =>
    group.files
      .map((file) => ({ file: relative(file), backend: group.backend, tests: testsIn(file) }))
      .filter((f) => !reported.has(`${f.file} [${f.backend}]`)),
  )
}

/** The tests a file declares (`test(` and `it(` calls; at least one, for tests made in a loop). */
export function testsIn(file) {
  const text = fs.readFileSync(file, 'utf8')
  return Math.max(1, (text.match(/^\s*(?:test|it)\(/gm) ?? []).length)
}

export function unreportedText(silent) {
  const tests = silent.reduce((sum, f) => sum + f.tests, 0)
  const line = (f) => `  ${f.file} [${f.backend}]: ${f.tests} test${f.tests === 1 ? '' : 's'}\n`
  const files = silent.map(line).join('')
  return (
    `\n${silent.length} file(s) never reported (their process was stopped at its time limit or ` +
    `died): ${tests} test(s) in them did not run and are counted as failed:\n${files}`
  )
}
