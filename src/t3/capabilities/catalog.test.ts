import { describe, expect, it } from "bun:test";
import { decodeCatalog } from "./catalog.ts";

const provider = (fields: Record<string, unknown>) => ({
	instanceId: "codex",
	driver: "codex",
	enabled: true,
	installed: true,
	version: "1",
	status: "ready",
	auth: { status: "authenticated" },
	checkedAt: "2026-11-29T19:09:35.738Z",
	models: [],
	...fields,
});

describe("decodeCatalog", () => {
	it("reads readiness, plan mode and option descriptors (captures-v2 shapes)", () => {
		const [codex] = decodeCatalog({
			providers: [
				provider({
					showInteractionModeToggle: true,
					models: [
						{
							slug: "gpt-5.6-sol",
							name: "GPT-5.6 Sol",
							isCustom: false,
							capabilities: {
								optionDescriptors: [
									{
										id: "reasoningEffort",
										label: "Reasoning",
										type: "select",
										options: [
											{ id: "low", label: "Low" },
											{ id: "medium", label: "Medium", isDefault: true },
										],
									},
									{ id: "fastMode", label: "Fast Mode", type: "boolean" },
									{ id: "future", label: "Future", type: "slider" },
								],
							},
						},
						{ slug: "bare", name: "Bare", isCustom: true, capabilities: null },
						{ name: "no slug" },
					],
				}),
			],
		});
		expect(codex).toEqual({
			instanceId: "codex",
			ready: true,
			reason: null,
			planMode: true,
			steer: "live",
			models: [
				{
					slug: "gpt-5.6-sol",
					name: "GPT-5.6 Sol",
					options: [
						{
							id: "reasoningEffort",
							label: "Reasoning",
							type: "select",
							values: ["low", "medium"],
							// No currentValue: the choice marked isDefault.
							default: "medium",
						},
						{
							id: "fastMode",
							label: "Fast Mode",
							type: "boolean",
							values: [],
							default: null,
						},
					],
				},
				{ slug: "bare", name: "Bare", options: [] },
			],
		});
	});

	it("says why a provider cannot run, and passes a warning on", () => {
		const message =
			"Claude Agent CLI (`claude`) is not installed or not on PATH.";
		const [notInstalled, disabled, unauthenticated, warning, noPlan] =
			decodeCatalog({
				providers: [
					provider({
						instanceId: "claudeAgent",
						installed: false,
						status: "error",
						auth: { status: "unknown" },
						message,
					}),
					provider({
						instanceId: "cursor",
						enabled: false,
						status: "disabled",
					}),
					provider({
						instanceId: "opencode",
						status: "error",
						auth: { status: "unauthenticated" },
					}),
					provider({ status: "warning", message: "x".repeat(900) }),
					provider({ instanceId: "grok", showInteractionModeToggle: false }),
				],
			});
		expect(notInstalled?.ready).toBe(false);
		expect(notInstalled?.reason).toBe(
			`claudeAgent is not installed on the machine: ${message}`,
		);
		expect(disabled?.reason).toBe("cursor is disabled on the machine.");
		expect(unauthenticated?.reason).toBe(
			"opencode is not authenticated on the machine.",
		);
		expect(warning?.ready).toBe(true);
		expect(warning?.reason?.length).toBe(500);
		expect(noPlan?.planMode).toBe(false);
	});

	it("tolerates malformed configs and providers", () => {
		expect(decodeCatalog(null)).toEqual([]);
		expect(decodeCatalog({ providers: "no" })).toEqual([]);
		expect(
			decodeCatalog({
				providers: [null, 3, { driver: "x" }, { provider: "legacy" }],
			}),
		).toEqual([
			{
				instanceId: "legacy",
				ready: true,
				reason: null,
				planMode: true,
				steer: "live",
				models: [],
			},
		]);
	});

	it("steer: the provider row's capabilities when it has them, else its driver's", () => {
		const steer = (p: Record<string, unknown>) =>
			decodeCatalog({ providers: [{ instanceId: "x", models: [], ...p }] })[0]
				?.steer;
		expect(steer({ driver: "codex" })).toBe("live");
		expect(steer({ driver: "grok" })).toBe("restart");
		expect(steer({ driver: "future" })).toBe("live");
		const turns = (t: Record<string, unknown>) => ({
			driver: "codex",
			capabilities: { turns: t },
		});
		expect(
			steer(
				turns({
					supportsActiveSteering: false,
					supportsSteeringByInterruptRestart: true,
				}),
			),
		).toBe("restart");
		expect(
			steer(
				turns({
					supportsActiveSteering: false,
					supportsSteeringByInterruptRestart: false,
				}),
			),
		).toBe("none");
	});
});
