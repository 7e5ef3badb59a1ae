// Runs the example suite of examples/emulator-in-your-tests.test.ts as part of ours.
import "../../examples/emulator-in-your-tests.test.ts"
