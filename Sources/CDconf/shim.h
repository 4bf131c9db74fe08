// libdconf and the parts of GLib it needs, and GIO's schema source, opened on first use rather
// than linked: only a daemon run with `--dconf` or `--flatpak` calls them, and the static
// `settingsd` must never load GLib (see docs/ARCHITECTURE.md). The declarations follow dconf.h (dconf 0.40) and GLib 2.x's headers,
// whose ABI is stable; `DconfShimTests` compiles this file beside the real headers and checks
// every type against them.
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/prctl.h>

typedef struct _DConfClient DConfClient;
typedef struct _DConfChangeset DConfChangeset;
typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GMainContext GMainContext;
typedef struct _GMainLoop GMainLoop;
typedef struct _GCancellable GCancellable;
typedef struct _GQueue GQueue;
typedef struct _GClosure GClosure;
#ifndef __G_ERROR_H__
/// GLib's error: a domain, a code and a message.
typedef struct _GError {
    uint32_t domain;
    int code;
    char *_Nullable message;
} GError;
#endif

/// `DCONF_READ_USER_VALUE`: the user's own value, never a site default.
#define CSETTINGS_DCONF_READ_USER_VALUE 2u
/// `G_PRIORITY_DEFAULT`.
#define CSETTINGS_G_PRIORITY_DEFAULT 0

/// The "changed" signal's handler: the prefix, the changed paths under it, and the writer's tag.
typedef void (*CSettingsDconfChanged)(
    DConfClient *_Nonnull client, const char *_Nonnull prefix, const char *_Nullable const *_Nonnull changes,
    const char *_Nullable tag, void *_Nullable data);
/// A function run once on a main context (`GSourceFunc`; it returns 0, `G_SOURCE_REMOVE`).
typedef int (*CSettingsSourceFunction)(void *_Nullable data);
/// Frees a callback's data (`GDestroyNotify`).
typedef void (*CSettingsDestroyNotify)(void *_Nullable data);

/// The libdconf and GLib functions settingsd calls.
typedef struct {
    DConfClient *_Nonnull (*_Nonnull client_new)(void);
    GVariant *_Nullable (*_Nonnull client_read_full)(
        DConfClient *_Nonnull client, const char *_Nonnull key, unsigned int flags, const GQueue *_Nullable read_through);
    char *_Nullable *_Nullable (*_Nonnull client_list)(
        DConfClient *_Nonnull client, const char *_Nonnull dir, int *_Nullable length);
    int (*_Nonnull client_is_writable)(DConfClient *_Nonnull client, const char *_Nonnull key);
    int (*_Nonnull client_change_sync)(
        DConfClient *_Nonnull client, DConfChangeset *_Nonnull changeset, char *_Nullable *_Nullable tag,
        GCancellable *_Nullable cancellable, GError *_Nullable *_Nullable error);
    void (*_Nonnull client_watch_sync)(DConfClient *_Nonnull client, const char *_Nonnull path);
    void (*_Nonnull client_unwatch_sync)(DConfClient *_Nonnull client, const char *_Nonnull path);
    DConfChangeset *_Nonnull (*_Nonnull changeset_new)(void);
    void (*_Nonnull changeset_set)(
        DConfChangeset *_Nonnull changeset, const char *_Nonnull path, GVariant *_Nullable value);
    void (*_Nonnull changeset_unref)(DConfChangeset *_Nonnull changeset);
    GMainContext *_Nonnull (*_Nonnull main_context_new)(void);
    void (*_Nonnull main_context_unref)(GMainContext *_Nonnull context);
    GMainContext *_Nonnull (*_Nonnull main_context_ref)(GMainContext *_Nonnull context);
    void (*_Nonnull main_context_push_thread_default)(GMainContext *_Nullable context);
    void (*_Nonnull main_context_pop_thread_default)(GMainContext *_Nullable context);
    void (*_Nonnull main_context_invoke_full)(
        GMainContext *_Nullable context, int priority, CSettingsSourceFunction _Nonnull function,
        void *_Nullable data, CSettingsDestroyNotify _Nullable notify);
    int (*_Nonnull main_context_iteration)(GMainContext *_Nullable context, int may_block);
    GMainLoop *_Nonnull (*_Nonnull main_loop_new)(GMainContext *_Nullable context, int is_running);
    void (*_Nonnull main_loop_run)(GMainLoop *_Nonnull loop);
    void (*_Nonnull main_loop_quit)(GMainLoop *_Nonnull loop);
    void (*_Nonnull main_loop_unref)(GMainLoop *_Nonnull loop);
    unsigned long (*_Nonnull signal_connect_data)(
        void *_Nonnull instance, const char *_Nonnull signal, void (*_Nonnull handler)(void),
        void *_Nullable data, void (*_Nullable destroy)(void *_Nullable, GClosure *_Nullable), unsigned int flags);
    void (*_Nonnull object_unref)(void *_Nonnull object);
    char *_Nonnull (*_Nonnull variant_print)(GVariant *_Nonnull value, int annotate);
    const char *_Nonnull (*_Nonnull variant_get_type_string)(GVariant *_Nonnull value);
    GVariant *_Nullable (*_Nonnull variant_parse)(
        const GVariantType *_Nullable type, const char *_Nonnull text, const char *_Nullable limit,
        const char *_Nullable *_Nullable end, GError *_Nullable *_Nullable error);
    GVariant *_Nonnull (*_Nonnull variant_ref_sink)(GVariant *_Nonnull value);
    void (*_Nonnull variant_unref)(GVariant *_Nonnull value);
    void (*_Nonnull free)(void *_Nullable memory);
    void (*_Nonnull strfreev)(char *_Nullable *_Nullable strings);
    void (*_Nonnull error_free)(GError *_Nonnull error);
} CSettingsDconf;

typedef struct _GSettingsSchemaSource GSettingsSchemaSource;
typedef struct _GSettingsSchema GSettingsSchema;
typedef struct _GSettingsSchemaKey GSettingsSchemaKey;

/// GIO's schema source and the GLib functions reading it needs: a Flatpak app's compiled
/// schemas (`gschemas.compiled`), read as GSettings reads them.
typedef struct {
    GSettingsSchemaSource *_Nullable (*_Nonnull source_new_from_directory)(
        const char *_Nonnull directory, GSettingsSchemaSource *_Nullable parent, int trusted,
        GError *_Nullable *_Nullable error);
    void (*_Nonnull source_list_schemas)(
        GSettingsSchemaSource *_Nonnull source, int recursive, char *_Nullable *_Nullable *_Nullable non_relocatable,
        char *_Nullable *_Nullable *_Nullable relocatable);
    GSettingsSchema *_Nullable (*_Nonnull source_lookup)(
        GSettingsSchemaSource *_Nonnull source, const char *_Nonnull schema_id, int recursive);
    void (*_Nonnull source_unref)(GSettingsSchemaSource *_Nonnull source);
    const char *_Nullable (*_Nonnull schema_get_path)(GSettingsSchema *_Nonnull schema);
    char *_Nullable *_Nonnull (*_Nonnull schema_list_keys)(GSettingsSchema *_Nonnull schema);
    GSettingsSchemaKey *_Nonnull (*_Nonnull schema_get_key)(GSettingsSchema *_Nonnull schema, const char *_Nonnull name);
    void (*_Nonnull schema_unref)(GSettingsSchema *_Nonnull schema);
    const GVariantType *_Nonnull (*_Nonnull key_get_value_type)(GSettingsSchemaKey *_Nonnull key);
    GVariant *_Nonnull (*_Nonnull key_get_default_value)(GSettingsSchemaKey *_Nonnull key);
    GVariant *_Nonnull (*_Nonnull key_get_range)(GSettingsSchemaKey *_Nonnull key);
    const char *_Nullable (*_Nonnull key_get_summary)(GSettingsSchemaKey *_Nonnull key);
    const char *_Nullable (*_Nonnull key_get_description)(GSettingsSchemaKey *_Nonnull key);
    void (*_Nonnull key_unref)(GSettingsSchemaKey *_Nonnull key);
    char *_Nonnull (*_Nonnull variant_type_dup_string)(const GVariantType *_Nonnull type);
    char *_Nonnull (*_Nonnull variant_print)(GVariant *_Nonnull value, int annotate);
    void (*_Nonnull variant_unref)(GVariant *_Nonnull value);
    void (*_Nonnull free)(void *_Nullable memory);
    void (*_Nonnull strfreev)(char *_Nullable *_Nullable strings);
    void (*_Nonnull error_free)(GError *_Nonnull error);
} CSettingsGio;

/// Opens GIO (`libgio-2.0.so.0`, which brings GLib) and fills `api`; returns NULL, or why it cannot.
static inline const char *_Nullable csettings_gio_load(CSettingsGio *_Nonnull api) {
    if (getauxval(AT_BASE) == 0)
        return "a statically linked program cannot load it (settingsd-daemon is the build that can)";
    void *gio = dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (gio == NULL) return dlerror();
    void *glib = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (glib == NULL) return dlerror();
#define CSETTINGS_LOAD_GIO(from, field, symbol) \
    if ((*(void **)&api->field = dlsym(from, #symbol)) == NULL) return dlerror();
    CSETTINGS_LOAD_GIO(gio, source_new_from_directory, g_settings_schema_source_new_from_directory)
    CSETTINGS_LOAD_GIO(gio, source_list_schemas, g_settings_schema_source_list_schemas)
    CSETTINGS_LOAD_GIO(gio, source_lookup, g_settings_schema_source_lookup)
    CSETTINGS_LOAD_GIO(gio, source_unref, g_settings_schema_source_unref)
    CSETTINGS_LOAD_GIO(gio, schema_get_path, g_settings_schema_get_path)
    CSETTINGS_LOAD_GIO(gio, schema_list_keys, g_settings_schema_list_keys)
    CSETTINGS_LOAD_GIO(gio, schema_get_key, g_settings_schema_get_key)
    CSETTINGS_LOAD_GIO(gio, schema_unref, g_settings_schema_unref)
    CSETTINGS_LOAD_GIO(gio, key_get_value_type, g_settings_schema_key_get_value_type)
    CSETTINGS_LOAD_GIO(gio, key_get_default_value, g_settings_schema_key_get_default_value)
    CSETTINGS_LOAD_GIO(gio, key_get_range, g_settings_schema_key_get_range)
    CSETTINGS_LOAD_GIO(gio, key_get_summary, g_settings_schema_key_get_summary)
    CSETTINGS_LOAD_GIO(gio, key_get_description, g_settings_schema_key_get_description)
    CSETTINGS_LOAD_GIO(gio, key_unref, g_settings_schema_key_unref)
    CSETTINGS_LOAD_GIO(glib, variant_type_dup_string, g_variant_type_dup_string)
    CSETTINGS_LOAD_GIO(glib, variant_print, g_variant_print)
    CSETTINGS_LOAD_GIO(glib, variant_unref, g_variant_unref)
    CSETTINGS_LOAD_GIO(glib, free, g_free)
    CSETTINGS_LOAD_GIO(glib, strfreev, g_strfreev)
    CSETTINGS_LOAD_GIO(glib, error_free, g_error_free)
#undef CSETTINGS_LOAD_GIO
    return NULL;
}

/// Names the calling thread `dconf` (for `top -H`, and the benchmark's count of its wake-ups).
static inline void csettings_dconf_name_thread(void) {
    prctl(PR_SET_NAME, "dconf", 0, 0, 0);
}

/// Connects `handler` to the client's "changed" signal.
static inline unsigned long csettings_dconf_on_changed(
    const CSettingsDconf *_Nonnull api, DConfClient *_Nonnull client, CSettingsDconfChanged _Nonnull handler,
    void *_Nullable data) {
    return api->signal_connect_data(client, "changed", (void (*)(void))handler, data, NULL, 0);
}

/// Opens libdconf (`libdconf.so.1`, which brings GLib) and fills `api`; returns NULL, or why it cannot.
static inline const char *_Nullable csettings_dconf_load(CSettingsDconf *_Nonnull api) {
    // A statically linked process has no dynamic loader (AT_BASE is 0): see CLibPQ/shim.h.
    if (getauxval(AT_BASE) == 0)
        return "a statically linked program cannot load it (settingsd-daemon is the build that can)";
    void *library = dlopen("libdconf.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return dlerror();
    void *glib = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (glib == NULL) return dlerror();
    void *gobject = dlopen("libgobject-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (gobject == NULL) return dlerror();
#define CSETTINGS_LOAD(from, field, symbol) \
    if ((*(void **)&api->field = dlsym(from, #symbol)) == NULL) return dlerror();
    CSETTINGS_LOAD(library, client_new, dconf_client_new)
    CSETTINGS_LOAD(library, client_read_full, dconf_client_read_full)
    CSETTINGS_LOAD(library, client_list, dconf_client_list)
    CSETTINGS_LOAD(library, client_is_writable, dconf_client_is_writable)
    CSETTINGS_LOAD(library, client_change_sync, dconf_client_change_sync)
    CSETTINGS_LOAD(library, client_watch_sync, dconf_client_watch_sync)
    CSETTINGS_LOAD(library, client_unwatch_sync, dconf_client_unwatch_sync)
    CSETTINGS_LOAD(library, changeset_new, dconf_changeset_new)
    CSETTINGS_LOAD(library, changeset_set, dconf_changeset_set)
    CSETTINGS_LOAD(library, changeset_unref, dconf_changeset_unref)
    CSETTINGS_LOAD(glib, main_context_new, g_main_context_new)
    CSETTINGS_LOAD(glib, main_context_unref, g_main_context_unref)
    CSETTINGS_LOAD(glib, main_context_ref, g_main_context_ref)
    CSETTINGS_LOAD(glib, main_context_push_thread_default, g_main_context_push_thread_default)
    CSETTINGS_LOAD(glib, main_context_pop_thread_default, g_main_context_pop_thread_default)
    CSETTINGS_LOAD(glib, main_context_invoke_full, g_main_context_invoke_full)
    CSETTINGS_LOAD(glib, main_context_iteration, g_main_context_iteration)
    CSETTINGS_LOAD(glib, main_loop_new, g_main_loop_new)
    CSETTINGS_LOAD(glib, main_loop_run, g_main_loop_run)
    CSETTINGS_LOAD(glib, main_loop_quit, g_main_loop_quit)
    CSETTINGS_LOAD(glib, main_loop_unref, g_main_loop_unref)
    CSETTINGS_LOAD(gobject, signal_connect_data, g_signal_connect_data)
    CSETTINGS_LOAD(gobject, object_unref, g_object_unref)
    CSETTINGS_LOAD(glib, variant_print, g_variant_print)
    CSETTINGS_LOAD(glib, variant_get_type_string, g_variant_get_type_string)
    CSETTINGS_LOAD(glib, variant_parse, g_variant_parse)
    CSETTINGS_LOAD(glib, variant_ref_sink, g_variant_ref_sink)
    CSETTINGS_LOAD(glib, variant_unref, g_variant_unref)
    CSETTINGS_LOAD(glib, free, g_free)
    CSETTINGS_LOAD(glib, strfreev, g_strfreev)
    CSETTINGS_LOAD(glib, error_free, g_error_free)
#undef CSETTINGS_LOAD
    return NULL;
}
