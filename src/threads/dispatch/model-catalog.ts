/**
 * Which models each machine really offers (`t3_models`) and the checks `t3_dispatch` makes
 * against them: provider ready, plan mode offered, options known. The catalog is read with
 * `server.getConfig` once per machine and kept until the machine reconnects or T3 says its
 * config changed (`subscribeServerConfig`, see t3/machine.ts).
 */
import type { Fleet, FleetMachine } from "../../fleet/fleet.ts";
import {
	type CatalogModel,
	type CatalogOption,
	type CatalogProvider,
	decodeCatalog,
} from "../../t3/capabilities/catalog.ts";
import { learnedSteer } from "../../t3/capabilities/learned-steer.ts";
import type { Steer } from "../../t3/capabilities/steering.ts";
import type { ModelSelection } from "../../t3/model.ts";
import type { ThreadDeps } from "../deps.ts";
import { ThreadError } from "../errors.ts";
import { requireOnline, resolveMachine } from "../resolve.ts";
import { modelName } from "../shapes.ts";

export interface ModelCatalog {
	/** The machine's providers: cached, or read now with `server.getConfig`. */
	providers(entry: FleetMachine): Promise<CatalogProvider[]>;
}

export function createModelCatalog(fleet: Fleet): ModelCatalog {
	/** A read stays here until invalidated: one that was in flight then serves only its callers. */
	const cache = new Map<string, Promise<CatalogProvider[]>>();
	fleet.forEachMachine((entry) => {
		const name = entry.config.name;
		const forget = () => cache.delete(name);
		const unsubscribe = entry.machine.onChange((change) => {
			if (change.kind === "state" || change.kind === "config") forget();
		});
		return () => {
			unsubscribe();
			forget();
		};
	});
	return {
		providers(entry) {
			const name = entry.config.name;
			const cached = cache.get(name);
			if (cached) return cached;
			const read = entry.machine.serverConfig().then(decodeCatalog);
			cache.set(name, read);
			read.catch(() => {
				if (cache.get(name) === read) cache.delete(name);
			});
			return read;
		},
	};
}

export type ModelsResult = {
	machine: string;
	default_model: string | null;
	models: {
		model: string;
		provider: string;
		name: string;
		ready: boolean;
		reason: string | null;
		plan_mode: boolean;
		steer: Steer;
		options: CatalogOption[];
	}[];
};

async function readCatalog(
	deps: ThreadDeps,
	entry: FleetMachine,
): Promise<CatalogProvider[]> {
	try {
		return await deps.catalog.providers(entry);
	} catch (error) {
		throw new ThreadError(
			`The model catalog of machine "${entry.config.name}" cannot be read (${(error as Error).message}). Try again shortly; t3_machines shows the machine's state.`,
		);
	}
}

/** `t3_models`: every model of every provider instance of the machine. */
export async function listModels(
	deps: ThreadDeps,
	machine: string,
): Promise<ModelsResult> {
	const entry = resolveMachine(deps, machine);
	await requireOnline(entry);
	const providers = await readCatalog(deps, entry);
	return {
		machine: entry.config.name,
		default_model: modelName(entry.config.model),
		models: providers.flatMap((p) =>
			p.models.map((m) => ({
				model: `${p.instanceId}/${m.slug}`,
				provider: p.instanceId,
				name: m.name,
				ready: p.ready,
				reason: p.reason,
				plan_mode: p.planMode,
				// What the instance's provider sessions reported, else the catalog's guess.
				steer: learnedSteer(entry.machine, p.instanceId) ?? p.steer,
				options: m.options,
			})),
		),
	};
}

export interface SelectionArgs {
	/** The `model` argument as given (it must then be ready). */
	model?: string;
	options?: Record<string, string | boolean>;
	interaction_mode?: "default" | "plan";
}

function describeOptions(model: CatalogModel): string {
	if (model.options.length === 0) return "this model takes no options";
	return `valid: ${model.options
		.map((o) =>
			o.type === "boolean"
				? `${o.id} (true or false)`
				: `${o.id} (one of ${o.values.join(", ")})`,
		)
		.join("; ")}`;
}

function checkOptions(
	given: Record<string, string | boolean>,
	model: CatalogModel,
	name: string,
): { id: string; value: string | boolean }[] {
	return Object.entries(given).map(([id, value]) => {
		const option = model.options.find((o) => o.id === id);
		if (!option) {
			throw new ThreadError(
				`options: unknown option "${id}" for model "${name}"; ${describeOptions(model)}.`,
			);
		}
		if (option.type === "boolean" && typeof value !== "boolean") {
			throw new ThreadError(
				`options.${id}: expects true or false for model "${name}", got ${JSON.stringify(value)}.`,
			);
		}
		if (
			option.type === "select" &&
			(typeof value !== "string" || !option.values.includes(value))
		) {
			throw new ThreadError(
				`options.${id}: ${JSON.stringify(value)} is not valid for model "${name}"; one of: ${option.values.join(", ")}.`,
			);
		}
		return { id, value };
	});
}

/**
 * Checks the model in effect against the machine's catalog and applies `options` (which
 * replace the configured ones). Only a dispatch that names a model, options or plan mode
 * reads the catalog; if it cannot be read, only `options` make that an error.
 */
export async function checkSelection(
	deps: ThreadDeps,
	entry: FleetMachine,
	selection: ModelSelection | undefined,
	args: SelectionArgs,
): Promise<ModelSelection | undefined> {
	const plan = args.interaction_mode === "plan";
	if (args.model === undefined && args.options === undefined && !plan)
		return selection;
	const machine = entry.config.name;
	if (!selection) {
		if (args.options === undefined) return selection;
		throw new ThreadError(
			`options: there is no model to check them against on machine "${machine}": pass model (see t3_models).`,
		);
	}
	const name = `${selection.instanceId}/${selection.model}`;
	let providers: CatalogProvider[];
	try {
		providers = await deps.catalog.providers(entry);
	} catch (error) {
		if (args.options === undefined) return selection;
		throw new ThreadError(
			`options: cannot be checked because the model catalog of machine "${machine}" cannot be read (${(error as Error).message}). Try again, or dispatch without options.`,
		);
	}
	const strict = args.model !== undefined || args.options !== undefined;
	const provider = providers.find((p) => p.instanceId === selection.instanceId);
	if (!provider) {
		if (!strict) return selection;
		throw new ThreadError(
			`model: provider instance "${selection.instanceId}" does not exist on machine "${machine}" (instances: ${providers.map((p) => p.instanceId).join(", ") || "none"}). Call t3_models for the models it offers.`,
		);
	}
	if (args.model !== undefined && !provider.ready) {
		// Both problems at once: fixing only the provider would still leave an unknown model.
		const unknown = provider.models.some((m) => m.slug === selection.model)
			? ""
			: `, and "${selection.model}" is not one of its models (${provider.models.map((m) => `${provider.instanceId}/${m.slug}`).join(", ") || "none"})`;
		throw new ThreadError(
			`model: "${name}" cannot run on machine "${machine}" now: ${(provider.reason ?? `provider ${provider.instanceId} is not ready`).replace(/\.$/, "")}${unknown}. Pick a model with ready: true from t3_models.`,
		);
	}
	if (plan && !provider.planMode) {
		throw new ThreadError(
			`interaction_mode: provider "${provider.instanceId}" on machine "${machine}" does not offer plan mode; use interaction_mode "default", or a model whose plan_mode is true in t3_models.`,
		);
	}
	const model = provider.models.find((m) => m.slug === selection.model);
	if (!model) {
		if (!strict) return selection;
		throw new ThreadError(
			`model: "${name}" is not offered on machine "${machine}" (its models there: ${provider.models.map((m) => `${provider.instanceId}/${m.slug}`).join(", ") || "none"}). Pass one of them, or call t3_models.`,
		);
	}
	if (args.options === undefined) return selection;
	const options = checkOptions(args.options, model, name);
	const { options: _configured, ...rest } = selection;
	return options.length ? { ...rest, options } : rest;
}
