import { describe, expect, it } from "bun:test";
import { T3Error } from "../machine-api.ts";
import {
	declaredDeliveryIntent,
	probeDeliveryIntent,
} from "./delivery-intent.ts";

const answering = (error: T3Error | null) => {
	const sent: Record<string, unknown>[] = [];
	const send = async (command: Record<string, unknown>) => {
		sent.push(command);
		if (error) throw error;
		return { sequence: 1 };
	};
	return { sent, send };
};

describe("the deliveryIntent probe decides from the server's answer", () => {
	it("a decoding defect naming deliveryIntent: the server takes it", async () => {
		const { send, sent } = answering(
			new T3Error(
				"DEFECT",
				'orchestration.dispatchCommand failed on the server: Expected "auto" | "steer" | "restart", got "t3code-mcp-probe"\n  at ["deliveryIntent"]',
			),
		);
		expect(await probeDeliveryIntent(send)).toBe(true);
		// Nothing can run: an invalid value, for a thread that does not exist.
		expect(sent[0]).toMatchObject({
			type: "message.dispatch",
			deliveryIntent: "t3code-mcp-probe",
			dispatchMode: { type: "start_immediately" },
		});
		expect(String(sent[0]?.threadId)).toStartWith("t3code-mcp-probe-");
	});

	it("a long decoder text: the raw defect is read, not only the capped message", async () => {
		const { send } = answering(
			new T3Error("DEFECT", "orchestration.dispatchCommand failed", {
				raw: `${"x".repeat(2_000)} at ["deliveryIntent"]`,
			}),
		);
		expect(await probeDeliveryIntent(send)).toBe(true);
	});

	it("a refusal of the missing thread: the field was dropped unread", async () => {
		const { send } = answering(
			new T3Error("REJECTED", "Failed to load orchestration projection"),
		);
		expect(await probeDeliveryIntent(send)).toBe(false);
	});

	it("a defect about something else, or an acceptance, proves nothing: treated as absent", async () => {
		expect(
			await probeDeliveryIntent(
				answering(new T3Error("DEFECT", 'Missing key\n  at ["text"]')).send,
			),
		).toBe(false);
		expect(await probeDeliveryIntent(answering(null).send)).toBe(false);
	});

	it("no answer (a drop, a timeout) decides nothing: thrown, so it is asked again", async () => {
		await expect(
			probeDeliveryIntent(
				answering(new T3Error("DISCONNECTED", "connection lost")).send,
			),
		).rejects.toThrow("connection lost");
	});
});

describe("the descriptor's serverResolvedCommandContext decides before any probe", () => {
	it("true or false is the answer; no flag (or no capabilities) leaves it to the probe", () => {
		const of = (capabilities: unknown) =>
			declaredDeliveryIntent({ serverVersion: "0.1.11", capabilities });
		expect(of({ serverResolvedCommandContext: true })).toBe(true);
		expect(of({ serverResolvedCommandContext: false })).toBe(false);
		expect(of({ repositoryIdentity: true })).toBeUndefined();
		expect(of({ serverResolvedCommandContext: "yes" })).toBeUndefined();
		expect(of(undefined)).toBeUndefined();
	});
});
