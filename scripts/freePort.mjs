/** A TCP port on 127.0.0.1 that nothing listens on now (the scripts' services and checks bind it next). */
import { createServer } from 'node:net';

export function freePort() {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}
