package io.hyphamesh.runtime.config;

import java.util.Locale;

/**
 * One configuration key: its dash-case path under {@code hypha:} in {@code application.yaml}, the
 * environment variable that overrides it, its default and what it does.
 *
 * @param key         dash-case path, e.g. {@code storage.shards}
 * @param defaultValue default as text; empty when there is none
 * @param description one line for {@code --help} and docs
 */
public record Setting(String key, String defaultValue, String description) {

    /** {@code HYPHA_} plus the key upper-cased with dots and dashes as underscores. */
    public String envVar() {
        return "HYPHA_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }
}
