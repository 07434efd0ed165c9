/**
 * `SIGHUP` re-reads the config file and the token files it names (CONTRACT.md "Operators"), and
 * applies them to the running server; a config that does not load is logged, and the running
 * one keeps serving. Reloads never overlap: a signal during one runs one more after it.
 */
import {
	ConfigError,
	configWarnings,
	type LoadConfigOptions,
	loadConfig,
} from "../config/index.ts";
import type { ReloadReport, Services } from "../services.ts";
import type { Logger } from "../util/log.ts";
import { whoMayCall } from "./who-may-call.ts";

export interface Reloader {
	/** Reloads now (what SIGHUP does); resolves when this reload and any it queued are done. */
	reload(): Promise<void>;
	/** Stops listening for SIGHUP. */
	stop(): void;
}

export function reloadOnHangup(
	services: Services,
	log: Logger,
	options: LoadConfigOptions,
): Reloader {
	let running: Promise<void> | undefined;
	let again = false;

	const once = async () => {
		let next: Awaited<ReturnType<typeof loadConfig>>;
		try {
			next = await loadConfig(options);
		} catch (error) {
			if (!(error instanceof ConfigError)) throw error;
			log.error("config reload failed: the running config keeps serving", {
				config: services.config.file,
				errors: error.message.split("\n"),
			});
			return;
		}
		const report = await services.reload(next);
		for (const warning of configWarnings(next)) log.warn(warning);
		log.info("config reloaded", {
			config: next.file,
			...reloadFields(report),
			...whoMayCall(services.config),
		});
		if (report.server.ignored.length > 0)
			log.warn(
				"config reload: these [server] settings cannot change while running and keep their value until a restart",
				{ keys: report.server.ignored },
			);
		if (report.server.atRestart.length > 0)
			log.warn(
				"config reload: these [server] settings apply at the next restart",
				{
					keys: report.server.atRestart,
				},
			);
	};

	const reload = () => {
		if (running) {
			again = true;
			return running;
		}
		running = (async () => {
			do {
				again = false;
				try {
					await once();
				} catch (error) {
					log.error("config reload failed", { error });
				}
			} while (again);
		})().finally(() => {
			running = undefined;
		});
		return running;
	};
	const onHangup = () => void reload();
	process.on("SIGHUP", onHangup);
	return {
		reload,
		stop: () => process.off("SIGHUP", onHangup),
	};
}

/** What changed, as log fields: only the non-empty lists; `changed: false` when none is. */
export function reloadFields(report: ReloadReport): Record<string, unknown> {
	const lists: Record<string, string[]> = {
		clients_added: report.clients.added,
		clients_removed: report.clients.removed,
		clients_changed: report.clients.changed,
		machines_added: report.machines.added,
		machines_removed: report.machines.removed,
		machines_reconnected: report.machines.reconnected,
		machines_updated: report.machines.updated,
		server_applied: report.server.applied,
	};
	const fields: Record<string, unknown> = {};
	for (const [key, names] of Object.entries(lists))
		if (names.length > 0) fields[key] = names;
	return Object.keys(fields).length > 0 ? fields : { changed: false };
}
