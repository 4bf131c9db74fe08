// libsecret (the Secret Service client: GNOME Keyring, KWallet) and the parts of GLib it needs,
// opened on first use rather than linked: only `settingsd keys` and a daemon that holds a sync
// key call them, and the static `settingsd` must never load GLib (see docs/ARCHITECTURE.md).
// The declarations follow libsecret 0.20's and GLib 2.x's headers, whose ABI is stable;
// `SecretShimTests` compiles this file beside the real headers and checks them.
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

typedef struct _GHashTable GHashTable;
typedef struct _GCancellable GCancellable;
#ifndef __G_ERROR_H__
/// GLib's error: a domain, a code and a message.
typedef struct _GError {
    uint32_t domain;
    int code;
    char *_Nullable message;
} GError;
#endif

/// `SecretSchemaAttribute`: a name and its type (0: a string).
typedef struct {
    const char *_Nullable name;
    int type;
} CSettingsSecretAttribute;

/// `SecretSchema`: its name, flags, up to 32 attributes, and reserved room.
typedef struct {
    const char *_Nullable name;
    int flags;
    CSettingsSecretAttribute attributes[32];
    int reserved;
    void *_Nullable reserved1, *_Nullable reserved2, *_Nullable reserved3, *_Nullable reserved4,
        *_Nullable reserved5, *_Nullable reserved6, *_Nullable reserved7;
} CSettingsSecretSchema;

/// GLib's `GHashFunc` and `GEqualFunc`.
typedef unsigned int (*CSettingsHashFunction)(const void *_Nullable key);
typedef int (*CSettingsEqualFunction)(const void *_Nullable a, const void *_Nullable b);

/// The libsecret and GLib functions settingsd calls.
typedef struct {
    int (*_Nonnull storev_sync)(
        const CSettingsSecretSchema *_Nonnull schema, GHashTable *_Nonnull attributes,
        const char *_Nullable collection, const char *_Nonnull label, const char *_Nonnull password,
        GCancellable *_Nullable cancellable, GError *_Nullable *_Nullable error);
    char *_Nullable (*_Nonnull lookupv_sync)(
        const CSettingsSecretSchema *_Nonnull schema, GHashTable *_Nonnull attributes,
        GCancellable *_Nullable cancellable, GError *_Nullable *_Nullable error);
    int (*_Nonnull clearv_sync)(
        const CSettingsSecretSchema *_Nonnull schema, GHashTable *_Nonnull attributes,
        GCancellable *_Nullable cancellable, GError *_Nullable *_Nullable error);
    void (*_Nonnull password_free)(char *_Nullable password);
    GHashTable *_Nonnull (*_Nonnull hash_table_new)(
        CSettingsHashFunction _Nullable hash, CSettingsEqualFunction _Nullable equal);
    int (*_Nonnull hash_table_insert)(GHashTable *_Nonnull table, void *_Nullable key, void *_Nullable value);
    void (*_Nonnull hash_table_unref)(GHashTable *_Nonnull table);
    CSettingsHashFunction _Nonnull str_hash;
    CSettingsEqualFunction _Nonnull str_equal;
    void (*_Nonnull error_free)(GError *_Nonnull error);
} CSettingsSecret;

/// The schema settingsd's sync keys are kept under: attributes `application` and `user`.
static const CSettingsSecretSchema csettings_secret_schema = {
    "org.settingsd.SyncKeys", 0, {{"application", 0}, {"user", 0}, {NULL, 0}}, 0,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL};

/// Opens libsecret (`libsecret-1.so.0`, which brings GLib) and fills `api`; returns NULL, or why it cannot.
static inline const char *_Nullable csettings_secret_load(CSettingsSecret *_Nonnull api) {
    // A statically linked process has no dynamic loader (AT_BASE is 0): see CLibPQ/shim.h.
    if (getauxval(AT_BASE) == 0)
        return "a statically linked program cannot load it (settingsd-daemon is the build that can)";
    void *library = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return dlerror();
    void *glib = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (glib == NULL) return dlerror();
#define CSETTINGS_LOAD(from, field, symbol) \
    if ((*(void **)&api->field = dlsym(from, #symbol)) == NULL) return dlerror();
    CSETTINGS_LOAD(library, storev_sync, secret_password_storev_sync)
    CSETTINGS_LOAD(library, lookupv_sync, secret_password_lookupv_sync)
    CSETTINGS_LOAD(library, clearv_sync, secret_password_clearv_sync)
    CSETTINGS_LOAD(library, password_free, secret_password_free)
    CSETTINGS_LOAD(glib, hash_table_new, g_hash_table_new)
    CSETTINGS_LOAD(glib, hash_table_insert, g_hash_table_insert)
    CSETTINGS_LOAD(glib, hash_table_unref, g_hash_table_unref)
    CSETTINGS_LOAD(glib, str_hash, g_str_hash)
    CSETTINGS_LOAD(glib, str_equal, g_str_equal)
    CSETTINGS_LOAD(glib, error_free, g_error_free)
#undef CSETTINGS_LOAD
    return NULL;
}

/// The attributes of this user's sync keys (`user` is the user's id as text).
static inline GHashTable *_Nonnull csettings_secret_attributes(
    const CSettingsSecret *_Nonnull api, const char *_Nonnull user) {
    GHashTable *table = api->hash_table_new(api->str_hash, api->str_equal);
    api->hash_table_insert(table, (void *)"application", (void *)"settingsd");
    api->hash_table_insert(table, (void *)"user", (void *)user);
    return table;
}

/// Takes the message of `error` (NULL: none) into a malloc'd string the caller frees, and frees it.
static inline char *_Nullable csettings_secret_message(const CSettingsSecret *_Nonnull api, GError *_Nullable error) {
    if (error == NULL) return NULL;
    char *message = error->message != NULL ? strdup(error->message) : NULL;
    api->error_free(error);
    return message;
}

/// Stores `text` as this user's sync keys in the default collection; returns NULL, or why not
/// (malloc'd).
static inline char *_Nullable csettings_secret_store(
    const CSettingsSecret *_Nonnull api, const char *_Nonnull user, const char *_Nonnull label,
    const char *_Nonnull text) {
    GHashTable *attributes = csettings_secret_attributes(api, user);
    GError *error = NULL;
    int stored = api->storev_sync(&csettings_secret_schema, attributes, "default", label, text, NULL, &error);
    api->hash_table_unref(attributes);
    if (stored) return NULL;
    char *message = csettings_secret_message(api, error);
    return message != NULL ? message : strdup("the Secret Service did not store it");
}

/// This user's sync keys as text (malloc'd; NULL with `*failure` NULL: none kept), or NULL with
/// why not in `*failure` (malloc'd).
static inline char *_Nullable csettings_secret_lookup(
    const CSettingsSecret *_Nonnull api, const char *_Nonnull user, char *_Nullable *_Nonnull failure) {
    GHashTable *attributes = csettings_secret_attributes(api, user);
    GError *error = NULL;
    char *found = api->lookupv_sync(&csettings_secret_schema, attributes, NULL, &error);
    api->hash_table_unref(attributes);
    *failure = csettings_secret_message(api, error);
    if (found == NULL) return NULL;
    char *copy = strdup(found);
    api->password_free(found);
    return copy;
}

/// Removes this user's sync keys; returns NULL, or why not (malloc'd).
static inline char *_Nullable csettings_secret_clear(const CSettingsSecret *_Nonnull api, const char *_Nonnull user) {
    GHashTable *attributes = csettings_secret_attributes(api, user);
    GError *error = NULL;
    api->clearv_sync(&csettings_secret_schema, attributes, NULL, &error);
    api->hash_table_unref(attributes);
    return csettings_secret_message(api, error);
}
