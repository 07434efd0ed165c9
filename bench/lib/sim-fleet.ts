/**
 * Subprocess entry: `bun bench/lib/sim-fleet.ts MACHINES THREADS` starts MACHINES simulators
 * on loopback, creates THREADS idle threads spread over them (orchestration.launchThread with no
 * initial message, through a bare RPC client), prints one JSON line
 * `{ machines: SimRef[], threads: { threadId, machine, projectId }[] }`, then runs until
 * stdin closes or SIGTERM. Kept out of the bench process so its CPU is not the connector's.
 * `BENCH_MESSAGE_CHARS=N` gives every thread a latest assistant reply of N characters (as a
 * thread with a history has; pre-release T3 sends it in every shell, the newest sends null).
 */
import { config } from "./config.ts";
import { connectRpc, createIdleThread, firstProjectId } from "./rpc.ts";
import { startSims } from "./sims.ts";

const machineCount = Number(process.argv[2] ?? 50);
const threadCount = Number(process.argv[3] ?? 0);
const { messageChars } = config;
// Usage windows on every machine, as a T3 with subscription accounts reports them (issue 46).
const group = await startSims(machineCount, {
	stepMs: 20,
	usage: [
		{
			provider: "claudeAgent",
			kind: "session",
			usedPercent: 42,
			resetsInMin: 120,
		},
		{
			provider: "claudeAgent",
			kind: "weekly",
			usedPercent: 17,
			resetsInMin: 5000,
		},
		{ provider: "codex", kind: "session", usedPercent: 8, resetsInMin: 200 },
	],
});
const threads: { threadId: string; machine: string; projectId: string }[] = [];
await Promise.all(
	group.refs.map(async (ref, i) => {
		const share =
			Math.floor(threadCount / machineCount) +
			(i < threadCount % machineCount ? 1 : 0);
		const projectId = await firstProjectId(ref);
		const rpc = await connectRpc(ref);
		for (let done = 0; done < share; ) {
			const batch = Math.min(25, share - done);
			const ids = await Promise.all(
				Array.from({ length: batch }, (_, k) =>
					createIdleThread(rpc, projectId, `bench thread ${done + k}`),
				),
			);
			for (const threadId of ids) {
				threads.push({ threadId, machine: ref.name, projectId });
				if (messageChars > 0)
					group.sims[i]?.seedMessage(threadId, {
						role: "assistant",
						text: reply(threads.length, messageChars),
					});
			}
			done += batch;
		}
		rpc.close();
	}),
);
/** A reply of `chars` characters, different per thread (words, as a model writes them). */
function reply(n: number, chars: number): string {
	const words = [
		"the",
		"change",
		"passes",
		"tests",
		`thread-${n}`,
		"and",
		"builds",
	];
	let text = "";
	for (let k = 0; text.length < chars; k += 1)
		text += `${words[(n + k) % words.length]} `;
	return text.slice(0, chars);
}

process.stdout.write(`${JSON.stringify({ machines: group.refs, threads })}\n`);

const stop = async () => {
	await group.stop();
	process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
