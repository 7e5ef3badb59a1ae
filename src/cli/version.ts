/**
 * worksync's version, as `worksync version` and `--version` print it. A literal rather
 * than package.json read at run time: the bundle starts without reading another file.
 * test/cli/help-output.test.ts holds it equal to package.json's.
 */
export const VERSION = "0.2.0"
