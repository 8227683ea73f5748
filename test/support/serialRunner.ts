/**
 * The slow project's runner (jest.config.js): jest's own, told to run one test file at a time (in
 * the main process, as --runInBand does) whatever maxWorkers says, so the fast project can use
 * every worker while the files that measure wall time never share the machine with each other.
 */
import TestRunner from 'jest-runner';

export default class SerialRunner extends TestRunner {
	override readonly isSerial = true;
}
