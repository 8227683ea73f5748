/** The CLI's words for a duration, as the console says them (runner/src/http/console/shared.js). */
import { spoken } from '../../runner/src/cli/command';

test('a duration in whole parts, never rounded up: 7,170 s is 1 h 59 min', () => {
	expect([45, 60, 725, 3600, 3660, 7170, 7199, 12_030, 45.7].map(spoken)).toEqual([
		'45 s',
		'1 min',
		'12 min 5 s',
		'1 h',
		'1 h 1 min',
		'1 h 59 min',
		'1 h 59 min',
		'3 h 20 min',
		'45 s',
	]);
});
