// A reporter for Node's test runner (scripts/run-tests.mjs adds it when TEST_TIMES names a
// file): each top-level test's time, whether it passed, its name and its file, a line each,
// to find the files that make a tier long. A file's start-up (loading its modules) is not in it.
export default async function* testTimes(source) {
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      const seconds = (event.data.details.duration_ms / 1000).toFixed(2);
      yield `${seconds}\t${event.type === 'test:pass' ? 'pass' : 'FAIL'}\t${event.data.file ?? ''}\t${event.data.name}\n`;
    }
  }
}
