// libpq, opened on first use rather than linked: linking it loads some twenty libraries
// (OpenSSL, Kerberos, LDAP, GnuTLS...) into every process, which tripled the CLI's start-up,
// while only a daemon with a hub ever calls it.
// Editing this file? Touch Sources/SettingsStore/Postgres/*.swift and the bench's RawPostgres.swift
// too: a [system] module's headers are not build dependencies, and a file compiled against the
// old struct would copy it at the old size.
#include <dlfcn.h>
#include <stddef.h>
#include <sys/auxv.h>
#include <postgresql/libpq-fe.h>

/// The libpq functions settingsd calls, with the types libpq-fe.h declares.
typedef struct {
    __typeof__(PQconnectdb) *_Nonnull connectdb;
    __typeof__(PQconnectdbParams) *_Nonnull connectdbParams;
    __typeof__(PQfinish) *_Nonnull finish;
    __typeof__(PQstatus) *_Nonnull status;
    __typeof__(PQerrorMessage) *_Nonnull errorMessage;
    __typeof__(PQsocket) *_Nonnull socket;
    __typeof__(PQexec) *_Nonnull exec;
    __typeof__(PQexecParams) *_Nonnull execParams;
    __typeof__(PQresultStatus) *_Nonnull resultStatus;
    __typeof__(PQresultErrorMessage) *_Nonnull resultErrorMessage;
    __typeof__(PQresultErrorField) *_Nonnull resultErrorField;
    __typeof__(PQclear) *_Nonnull clear;
    __typeof__(PQntuples) *_Nonnull ntuples;
    __typeof__(PQgetisnull) *_Nonnull getisnull;
    __typeof__(PQgetlength) *_Nonnull getlength;
    __typeof__(PQgetvalue) *_Nonnull getvalue;
    __typeof__(PQconsumeInput) *_Nonnull consumeInput;
    __typeof__(PQnotifies) *_Nonnull notifies;
    __typeof__(PQfreemem) *_Nonnull freemem;
    __typeof__(PQescapeIdentifier) *_Nonnull escapeIdentifier;
    __typeof__(PQconninfoParse) *_Nonnull conninfoParse;
    __typeof__(PQconninfoFree) *_Nonnull conninfoFree;
    __typeof__(PQsendQueryParams) *_Nonnull sendQueryParams;
    __typeof__(PQisBusy) *_Nonnull isBusy;
    __typeof__(PQgetResult) *_Nonnull getResult;
    __typeof__(PQflush) *_Nonnull flush;
    __typeof__(PQsetnonblocking) *_Nonnull setnonblocking;
    __typeof__(PQbackendPID) *_Nonnull backendPID;
    __typeof__(PQprepare) *_Nonnull prepare;
    __typeof__(PQexecPrepared) *_Nonnull execPrepared;
    __typeof__(PQsendPrepare) *_Nonnull sendPrepare;
    __typeof__(PQsendQueryPrepared) *_Nonnull sendQueryPrepared;
    __typeof__(PQescapeLiteral) *_Nonnull escapeLiteral;
    __typeof__(PQsendQuery) *_Nonnull sendQuery;
    __typeof__(PQfn) *_Nonnull fn;
} CSettingsLibPQ;

/// Opens libpq (`libpq.so.5`) and fills `api`; returns NULL, or why it cannot.
static inline const char *_Nullable csettings_libpq_load(CSettingsLibPQ *_Nonnull api) {
    // A statically linked process has no dynamic loader (AT_BASE is 0): glibc would bring a
    // second C library in with libpq, and the process would crash in it.
    if (getauxval(AT_BASE) == 0)
        return "a statically linked program cannot load it (settingsd-daemon is the build that can)";
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return dlerror();
#define CSETTINGS_LOAD(field, symbol) \
    if ((*(void **)&api->field = dlsym(library, #symbol)) == NULL) return dlerror();
    CSETTINGS_LOAD(connectdb, PQconnectdb)
    CSETTINGS_LOAD(connectdbParams, PQconnectdbParams)
    CSETTINGS_LOAD(finish, PQfinish)
    CSETTINGS_LOAD(status, PQstatus)
    CSETTINGS_LOAD(errorMessage, PQerrorMessage)
    CSETTINGS_LOAD(socket, PQsocket)
    CSETTINGS_LOAD(exec, PQexec)
    CSETTINGS_LOAD(execParams, PQexecParams)
    CSETTINGS_LOAD(resultStatus, PQresultStatus)
    CSETTINGS_LOAD(resultErrorMessage, PQresultErrorMessage)
    CSETTINGS_LOAD(resultErrorField, PQresultErrorField)
    CSETTINGS_LOAD(clear, PQclear)
    CSETTINGS_LOAD(ntuples, PQntuples)
    CSETTINGS_LOAD(getisnull, PQgetisnull)
    CSETTINGS_LOAD(getlength, PQgetlength)
    CSETTINGS_LOAD(getvalue, PQgetvalue)
    CSETTINGS_LOAD(consumeInput, PQconsumeInput)
    CSETTINGS_LOAD(notifies, PQnotifies)
    CSETTINGS_LOAD(freemem, PQfreemem)
    CSETTINGS_LOAD(escapeIdentifier, PQescapeIdentifier)
    CSETTINGS_LOAD(conninfoParse, PQconninfoParse)
    CSETTINGS_LOAD(conninfoFree, PQconninfoFree)
    CSETTINGS_LOAD(sendQueryParams, PQsendQueryParams)
    CSETTINGS_LOAD(isBusy, PQisBusy)
    CSETTINGS_LOAD(getResult, PQgetResult)
    CSETTINGS_LOAD(flush, PQflush)
    CSETTINGS_LOAD(setnonblocking, PQsetnonblocking)
    CSETTINGS_LOAD(backendPID, PQbackendPID)
    CSETTINGS_LOAD(prepare, PQprepare)
    CSETTINGS_LOAD(execPrepared, PQexecPrepared)
    CSETTINGS_LOAD(sendPrepare, PQsendPrepare)
    CSETTINGS_LOAD(sendQueryPrepared, PQsendQueryPrepared)
    CSETTINGS_LOAD(escapeLiteral, PQescapeLiteral)
    CSETTINGS_LOAD(sendQuery, PQsendQuery)
    CSETTINGS_LOAD(fn, PQfn)
#undef CSETTINGS_LOAD
    return NULL;
}

/// Calls function `function` with `count` arguments (at most 4) through PostgreSQL's fast-path
/// interface (`PQfn`), asking for an integer result: argument `i` is `lengths[i]` bytes of its
/// binary form, the arguments laid end to end in `arguments`. `*resultLength` is 4 and `*result`
/// the value, or -1 for NULL. Only an integer is asked for because `PQfn` copies any other
/// result into the caller's buffer whatever its length, and the hub is not trusted with that;
/// for an integer it refuses any size but 2 or 4. NULL when `count` is out of range.
static inline PGresult *_Nullable csettings_libpq_call_integer(
    const CSettingsLibPQ *_Nonnull api, PGconn *_Nonnull connection, Oid function,
    const char *_Nonnull arguments, const int *_Nonnull lengths, int count, int *_Nonnull result,
    int *_Nonnull resultLength) {
    PQArgBlock blocks[4];
    *result = 0;
    *resultLength = -1;
    if (count < 0 || count > 4) return NULL;
    const char *next = arguments;
    for (int i = 0; i < count; i++) {
        blocks[i].len = lengths[i];
        blocks[i].isint = 0;
        blocks[i].u.ptr = (int *)(void *)next;
        next += lengths[i];
    }
    return api->fn(connection, (int)function, result, resultLength, 1, blocks, count);
}
