%% https-serve for Erlang/OTP: its `ssl` application (the TLS state machine
%% written in Erlang, its crypto through the `crypto` NIFs over OpenSSL's
%% libcrypto) as one of tls-bench's HTTPS servers, a process per connection.
%% It takes https-serve's command line and speaks its protocol with the
%% tools (crates/sockets/src/child.rs): --list, --probe answering
%% `supported` or `unsupported: <why>`, the parameter options, a first line
%% `serving ... on ADDR`, and on SIGTERM a summary written as JSON to --json
%% (tls_bench_results::sockets::ServerSummary; SIGINT is the VM's break
%% signal, ignored by the wrapper's +Bi). Every GET is answered `200 OK`
%% with --body bytes of the harness's pattern
%% (tls_bench_harness::workload::pattern); each connection's version, suite,
%% resumption and client authentication are checked after its handshake
%% (`ssl` tells a server no group: the client checks it). With --echo it
%% is instead an echo server (`serve`'s protocol, for `compare --sockets`):
%% every byte read is written back, each connection checked after its
%% handshake; `--library erlang-gen_tcp` is then `gen_tcp` without TLS, the
%% runtime's plaintext floor (listed as `NAME plaintext`). docs/https.md,
%% "Other runtimes", says what it counts.
%%
%% Compiled by the tools (tls_bench_sockets::runtimes, erlc) and run by the
%% wrapper they write: `erl -noshell +Bi -s https_serve start -extra
%% --certs-dir <the repository's certs/> ARGS`.
-module(https_serve).
-behaviour(gen_event).
-export([start/0, init/1, handle_event/2, handle_call/2, handle_info/2, terminate/2, code_change/3]).

-define(SERVER_NAME, "localhost").
-define(MAX_EXAMPLES, 5).
-define(RSS_INTERVAL_MS, 1000).

%% The counters' slots.
-define(CONNECTIONS, 1).
-define(ACTIVE, 2).
-define(OVER_LIMIT, 3).
-define(FULL, 4).
-define(RESUMED, 5).
-define(IDLE_CLOSED, 6).
-define(REQUESTS, 7).
-define(BYTES_SENT, 8).
-define(BYTES_RECEIVED, 9).

library() ->
    {ok, Ssl} = application:get_key(ssl, vsn),
    "erlang-ssl-" ++ Ssl ++ "+otp-" ++ otp_version().

%% The plaintext echo server's row name.
gen_tcp_library() -> "erlang-gen_tcp+otp-" ++ otp_version().

otp_version() ->
    Release = erlang:system_info(otp_release),
    File = filename:join([code:root_dir(), "releases", Release, "OTP_VERSION"]),
    case file:read_file(File) of
        {ok, V} -> string:trim(binary_to_list(V));
        _ -> Release
    end.

fail(Code, Format, Args) ->
    io:format(standard_error, "error: " ++ Format ++ "~n", Args),
    erlang:halt(Code).

%% --name value and --name=value; --list and --probe take none.
parse([], Acc) -> Acc;
parse(["--" ++ Arg | Rest], Acc) ->
    Flags = ["list", "probe", "echo"],
    Valued = ["library", "kind", "suite", "group", "cert", "listen", "threads", "cores", "body",
              "max-connections", "handshake-timeout", "idle-timeout", "json", "certs-dir"],
    case string:split(Arg, "=") of
        [Name, Value] ->
            lists:member(Name, Valued) orelse fail(2, "unknown option --~s", [Name]),
            parse(Rest, Acc#{Name => Value});
        [Name] ->
            case {lists:member(Name, Flags), lists:member(Name, Valued), Rest} of
                {true, _, _} -> parse(Rest, Acc#{Name => true});
                {_, true, [Value | Rest2]} -> parse(Rest2, Acc#{Name => Value});
                {_, true, []} -> fail(2, "--~s needs a value", [Name]);
                _ -> fail(2, "unknown option --~s", [Name])
            end
    end;
parse([Other | _], _) -> fail(2, "unexpected argument ~p", [Other]).

fold(What, Value, Names) ->
    Lower = string:lowercase(Value),
    case [N || N <- Names, string:lowercase(N) =:= Lower] of
        [N | _] -> N;
        [] -> fail(2, "--~s ~p: valid values are ~s", [What, Value, lists:join(", ", Names)])
    end.

chains() ->
    #{"RSA-2048" => "rsa2048", "RSA-3072" => "rsa3072", "RSA-4096" => "rsa4096",
      "ECDSA-P256" => "ecdsa-p256", "ECDSA-P384" => "ecdsa-p384"}.

suites() ->
    ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
     "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
     "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
     "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"].

params(Args) ->
    Kind = fold("kind", maps:get("kind", Args, "server-auth"), ["server-auth", "mTLS", "resumption"]),
    Suite = fold("suite", maps:get("suite", Args, "TLS_AES_128_GCM_SHA256"), suites()),
    Group = fold("group", maps:get("group", Args, "x25519"), ["x25519", "secp256r1", "secp384r1", "X25519MLKEM768"]),
    Cert = fold("cert", maps:get("cert", Args, "ECDSA-P256"), lists:sort(maps:keys(chains()))),
    Tls13 = not lists:prefix("TLS_ECDHE_", Suite),
    Protocol = case Tls13 of true -> "TLSv1.3"; false -> "TLSv1.2" end,
    #{kind => Kind, suite => Suite, group => Group, cert => Cert, tls13 => Tls13, protocol => Protocol,
      id => lists:flatten(lists:join(",", [Kind, Protocol, Suite, Group, Cert]))}.

%% The listen options for P: {ok, Options}, {unsupported, Why}, or
%% {failed, Why} when a certificate or key file is broken.
options(#{kind := Kind, suite := Suite, group := Group, cert := Cert, tls13 := Tls13}, CertsDir) ->
    OldOtp = list_to_integer(erlang:system_info(otp_release)) =< 25,
    Mismatch = not Tls13 andalso lists:prefix("TLS_ECDHE_ECDSA_", Suite) =/= lists:prefix("ECDSA", Cert),
    if
        Group =:= "X25519MLKEM768" ->
            {unsupported, "Erlang/OTP's ssl " ++ otp_version() ++ " has no X25519MLKEM768"};
        not Tls13 andalso Group =:= "x25519" ->
            {unsupported, "Erlang/OTP's ssl has no x25519 in TLS 1.2 (ssl:eccs())"};
        Kind =:= "resumption", Tls13, OldOtp ->
            %% Seen with OTP 25.2.3; later releases not checked here.
            {unsupported, "Erlang/OTP " ++ otp_version() ++ "'s TLS 1.3 ticket server crashes on a "
             "ClientHello offering a signature scheme it does not know (ML-DSA: OpenSSL 3.5 and "
             "later, rustls on aws-lc-rs), and every resumption after that fails"};
        Kind =:= "resumption" ->
            {unsupported, "Erlang/OTP's ssl resumes TLS 1.2 by session ID only (no RFC 5077 "
             "tickets), and the s2n-tls client resumes by ticket only"};
        Mismatch ->
            {unsupported, Suite ++ " needs a certificate of its own key type, not " ++ Cert};
        true ->
            Dir = filename:join(CertsDir, maps:get(Cert, chains())),
            Version = case Tls13 of true -> 'tlsv1.3'; false -> 'tlsv1.2' end,
            Resumption = Kind =:= "resumption",
            Base = [{certfile, filename:join(Dir, "server-chain.pem")},
                    {keyfile, filename:join(Dir, "server-key.pem")},
                    {versions, [Version]},
                    {ciphers, [ssl:str_to_suite(Suite)]},
                    case Tls13 of
                        true -> {supported_groups, [list_to_atom(Group)]};
                        false -> {eccs, [list_to_atom(Group)]}
                    end,
                    {alpn_preferred_protocols, [<<"http/1.1">>]},
                    %% Another name is refused in the handshake: OTP 25's sni_fun
                    %% cannot answer unrecognized_name (its TLS 1.3 server crashes
                    %% on it), so another name gets the version this row does
                    %% not serve: the handshake ends in an alert (illegal_parameter).
                    {sni_fun, fun(?SERVER_NAME) -> [];
                                 (_) -> [{versions, [case Tls13 of true -> 'tlsv1.2'; false -> 'tlsv1.3' end]}]
                              end},
                    %% Failed handshakes are counted, not logged one by one.
                    {log_level, warning},
                    {active, false}, {reuseaddr, true}, {backlog, 4096}, {nodelay, true}],
            %% Resumption only when asked for (TLS 1.3's stateless tickets),
            %% and no TLS 1.2 session cache.
            Tickets = case Tls13 of
                          true when Resumption -> [{session_tickets, stateless}];
                          true -> [];
                          false -> [{reuse_sessions, false}]
                      end,
            Mtls = case Kind of
                       "mTLS" -> [{verify, verify_peer}, {fail_if_no_peer_cert, true},
                                  {cacertfile, filename:join(Dir, "ca-cert.pem")}];
                       _ -> [{verify, verify_none}]
                   end,
            %% ssl:listen reads the files at the first handshake only: the
            %% chain and key are decoded here, so a broken file fails the
            %% start and --probe, not every handshake.
            Files = [{filename:join(Dir, "server-chain.pem"), certificate},
                     {filename:join(Dir, "server-key.pem"), key}]
                    ++ [{filename:join(Dir, "ca-cert.pem"), certificate} || Kind =:= "mTLS"],
            case [Why || {File, Want} <- Files, {error, Why} <- [pem_file(File, Want)]] of
                [] -> {ok, Base ++ Tickets ++ Mtls};
                [Why | _] -> {failed, Why}
            end
    end.

%% ok when File holds at least one PEM entry of the kind wanted (a
%% certificate, or a private key) and every such entry decodes; else
%% {error, Why}, naming the file.
pem_file(File, Want) ->
    try
        {ok, Bin} = file:read_file(File),
        Entries = [E || {Type, _, _} = E <- public_key:pem_decode(Bin),
                        (Type =:= 'Certificate') =:= (Want =:= certificate)],
        Entries =/= [] orelse throw(io_lib:format("no ~s in it", [Want])),
        _ = [public_key:pem_entry_decode(E) || E <- Entries],
        ok
    catch
        throw:Why -> {error, lists:flatten(io_lib:format("~s: ~s", [File, Why]))};
        Class:Why -> {error, lists:flatten(io_lib:format("~s: not a readable PEM ~s (~p:~p)",
                                                        [File, Want, Class, Why]))}
    end.

pattern(N) -> pattern(N, 16#9E3779B97F4A7C15, []).
pattern(0, _, Acc) -> list_to_binary(lists:reverse(Acc));
pattern(N, X0, Acc) ->
    M = 16#FFFFFFFFFFFFFFFF,
    X1 = X0 bxor ((X0 bsl 13) band M),
    X2 = X1 bxor (X1 bsr 7),
    X3 = X2 bxor ((X2 bsl 17) band M),
    pattern(N - 1, X3, [X3 band 255 | Acc]).

duration(What, Text) ->
    case re:run(Text, "^([0-9]+)(ms|s|m)$", [{capture, all_but_first, list}]) of
        {match, [N, "ms"]} -> list_to_integer(N);
        {match, [N, "s"]} -> list_to_integer(N) * 1000;
        {match, [N, "m"]} -> list_to_integer(N) * 60000;
        _ -> fail(2, "--~s ~p: a duration such as 500ms, 10s or 1m", [What, Text])
    end.

integer(What, Text, Least) ->
    case string:to_integer(string:trim(Text)) of
        {N, ""} when N >= Least -> N;
        _ -> fail(2, "--~s ~p: an integer of at least ~B", [What, Text, Least])
    end.

rss_kib() ->
    case file:read_file("/proc/self/statm") of
        {ok, B} -> [_, Pages | _] = string:lexemes(binary_to_list(B), " \n"), list_to_integer(Pages) * 4;
        _ -> 0
    end.

%% What a connection negotiated, against P; a resumption run's first, full
%% handshake is checked as server-auth. Returns {ok, Resumed} or {error, Why}.
check(S, #{kind := Kind, suite := Suite, protocol := Protocol}) ->
    {ok, Info} = ssl:connection_information(S, [protocol, selected_cipher_suite, session_resumption]),
    Resumed = proplists:get_value(session_resumption, Info, false),
    Wanted = case Kind =:= "resumption" andalso not Resumed of true -> "server-auth"; false -> Kind end,
    Got = case proplists:get_value(protocol, Info) of 'tlsv1.3' -> "TLSv1.3"; 'tlsv1.2' -> "TLSv1.2"; V -> atom_to_list(V) end,
    GotSuite = ssl:suite_to_str(proplists:get_value(selected_cipher_suite, Info)),
    Auth = case ssl:peercert(S) of {ok, _} -> true; _ -> false end,
    Wrong = [W || {false, W} <- [
        {Got =:= Protocol, io_lib:format("protocol ~s (wanted ~s)", [Got, Protocol])},
        {GotSuite =:= Suite, io_lib:format("suite ~s (wanted ~s)", [GotSuite, Suite])},
        {Resumed =:= (Wanted =:= "resumption"), io_lib:format("resumed ~p (wanted ~p)", [Resumed, Wanted =:= "resumption"])},
        {Auth =:= (Wanted =:= "mTLS"), io_lib:format("client authenticated ~p (wanted ~p)", [Auth, Wanted =:= "mTLS"])}]],
    case Wrong of
        [] -> {ok, Resumed};
        _ -> {error, lists:flatten(["negotiated " | lists:join(", ", Wrong)])}
    end.

%% The failures: a process holding the counts by kind and the first messages.
failures(Errors, Examples) ->
    receive
        {failed, Kind, Message} ->
            Ex = case length(Examples) < ?MAX_EXAMPLES of
                     true -> Examples ++ [Kind ++ ": " ++ Message];
                     false -> Examples
                 end,
            failures(maps:update_with(Kind, fun(N) -> N + 1 end, 1, Errors), Ex);
        {report, From} ->
            From ! {failures, Errors, Examples},
            failures(Errors, Examples)
    end.

kind_of(timeout) -> "timeout";
kind_of(closed) -> "closed";
kind_of(econnreset) -> "reset";
kind_of(epipe) -> "reset";
kind_of(_) -> "handshake".

acceptor(L, St = #{counters := C, max := Max, mod := Mod}) ->
    Accepted = case Mod of ssl -> ssl:transport_accept(L); gen_tcp -> gen_tcp:accept(L) end,
    case Accepted of
        {ok, T} ->
            counters:add(C, ?CONNECTIONS, 1),
            counters:add(C, ?ACTIVE, 1),
            case counters:get(C, ?ACTIVE) > Max of
                true ->
                    counters:sub(C, ?ACTIVE, 1),
                    counters:add(C, ?OVER_LIMIT, 1),
                    Mod:close(T);
                false ->
                    Pid = spawn(fun() -> receive go -> connection(T, St) end end),
                    case Mod:controlling_process(T, Pid) of
                        ok -> Pid ! go;
                        {error, Reason} ->
                            exit(Pid, kill),
                            counters:sub(C, ?ACTIVE, 1),
                            maps:get(failures, St) ! {failed, kind_of(Reason), io_lib:format("~p", [Reason])},
                            Mod:close(T)
                    end
            end,
            acceptor(L, St);
        {error, closed} -> ok;
        {error, Reason} ->
            maps:get(failures, St) ! {failed, "io", io_lib:format("~p", [Reason])},
            acceptor(L, St)
    end.

connection(T, St = #{counters := C, failures := F, mod := Mod}) ->
    try
        case Mod of
            ssl -> serve(T, St);
            gen_tcp -> ok = inet:setopts(T, [binary]), echo(gen_tcp, T, St), gen_tcp:close(T)
        end
    catch
        Class:Reason ->
            F ! {failed, "io", lists:flatten(io_lib:format("~p:~p", [Class, Reason]))},
            Mod:close(T)
    after
        counters:sub(C, ?ACTIVE, 1)
    end.

serve(T, St = #{counters := C, failures := F, p := P, handshake_timeout := Hs}) ->
    case ssl:handshake(T, Hs) of
        {ok, S} ->
            case check(S, P) of
                {ok, Resumed} ->
                    counters:add(C, case Resumed of true -> ?RESUMED; false -> ?FULL end, 1),
                    case St of
                        #{echo := true} -> ok = ssl:setopts(S, [binary]), echo(ssl, S, St);
                        _ -> ok = ssl:setopts(S, [{packet, http_bin}]), requests(S, St)
                    end;
                {error, Why} ->
                    F ! {failed, "negotiated", Why}
            end,
            ssl:close(S);
        {error, Reason} ->
            F ! {failed, kind_of(Reason), lists:flatten(io_lib:format("~p", [Reason]))},
            ssl:close(T)
    end.

%% Echoes (Mod: ssl or gen_tcp) until the client closes (its close_notify
%% answered with ours by the close), idles past the timeout (idle-closed),
%% or fails; each read taken in active-once mode (see head/4).
echo(Mod, S, St = #{idle_timeout := Idle, counters := C, failures := F}) ->
    {Data, Closed, Error} = case Mod of ssl -> {ssl, ssl_closed, ssl_error}; gen_tcp -> {tcp, tcp_closed, tcp_error} end,
    ok = case Mod of ssl -> ssl:setopts(S, [{active, once}]); gen_tcp -> inet:setopts(S, [{active, once}]) end,
    receive
        {Data, S, Bytes} ->
            counters:add(C, ?BYTES_RECEIVED, byte_size(Bytes)),
            case Mod:send(S, Bytes) of
                ok -> counters:add(C, ?BYTES_SENT, byte_size(Bytes)), echo(Mod, S, St);
                {error, Reason} -> F ! {failed, kind_of(Reason), lists:flatten(io_lib:format("echoing: ~p", [Reason]))}
            end;
        {Closed, S} -> ok;
        {Error, S, Reason} -> F ! {failed, kind_of(Reason), lists:flatten(io_lib:format("reading: ~p", [Reason]))}
    after Idle -> counters:add(C, ?IDLE_CLOSED, 1)
    end.

%% Requests on a connection, each head whole within the idle timeout.
requests(S, St = #{idle_timeout := Idle}) ->
    Deadline = erlang:monotonic_time(millisecond) + Idle,
    case head(S, Deadline, none, false) of
        {ok, Method, Close} ->
            respond(S, Method, St),
            case Close orelse Method =/= 'GET' of
                true -> ok;
                false -> requests(S, St)
            end;
        timeout -> counters:add(maps:get(counters, St), ?IDLE_CLOSED, 1);
        closed -> ok;
        {error, Reason} -> maps:get(failures, St) ! {failed, kind_of(Reason), io_lib:format("~p", [Reason])}
    end.

%% A request's head, line by line ({packet, http_bin}), each line taken
%% in active-once mode: a passive ssl:recv/3 pending when the client's
%% close_notify arrives does not always return (OTP 25: about 1 kept
%% connection in 10 here waited for its timeout).
head(S, Deadline, Method, Close) ->
    Left = Deadline - erlang:monotonic_time(millisecond),
    case Left =< 0 of
        true -> timeout;
        false ->
            ok = ssl:setopts(S, [{active, once}]),
            receive
                {ssl, S, {http_request, M, _, _}} -> head(S, Deadline, M, Close);
                {ssl, S, {http_header, _, 'Connection', _, V}} ->
                    head(S, Deadline, Method, Close orelse string:lowercase(V) =:= <<"close">>);
                {ssl, S, {http_header, _, _, _, _}} -> head(S, Deadline, Method, Close);
                {ssl, S, http_eoh} -> {ok, Method, Close};
                {ssl, S, {http_error, _}} -> {ok, bad, true};
                {ssl_closed, S} when Method =:= none -> closed;
                {ssl_closed, S} -> {error, closed};
                {ssl_error, S, Reason} -> {error, Reason}
            after Left -> timeout
            end
    end.

respond(S, 'GET', #{response := Response, counters := C, body_len := Len}) ->
    case ssl:send(S, Response) of
        ok -> counters:add(C, ?REQUESTS, 1), counters:add(C, ?BYTES_SENT, Len);
        _ -> ok
    end;
respond(S, _, _) ->
    ssl:send(S, <<"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n">>).

%% The JSON of a summary (maps, lists, strings as binaries, numbers, null).
json(null) -> "null";
json(true) -> "true";
json(false) -> "false";
json(N) when is_integer(N) -> integer_to_list(N);
json(F) when is_float(F) -> io_lib:format("~.6f", [F]);
json(B) when is_binary(B) ->
    Escaped = lists:map(fun($") -> "\\\""; ($\\) -> "\\\\"; (Ch) when Ch < 32 -> io_lib:format("\\u~4.16.0b", [Ch]); (Ch) -> Ch end,
                        unicode:characters_to_list(B)),
    [$", Escaped, $"];
json(M) when is_map(M) ->
    ["{", lists:join(", ", [[json(K), ": ", json(V)] || {K, V} <- lists:sort(maps:to_list(M))]), "}"];
json(L) when is_list(L) -> ["[", lists:join(", ", [json(E) || E <- L]), "]"].

str(S) -> unicode:characters_to_binary(S).

%% The signal handler (gen_event in erl_signal_server): SIGTERM to Pid.
init(Pid) -> {ok, Pid}.
handle_event(sigterm, Pid) -> Pid ! stop, {ok, Pid};
handle_event(_, Pid) -> {ok, Pid}.
handle_call(_, Pid) -> {ok, ok, Pid}.
handle_info(_, Pid) -> {ok, Pid}.
terminate(_, _) -> ok.
code_change(_, Pid, _) -> {ok, Pid}.

start() ->
    %% Reports (a crashed ssl process) go to stderr: stdout is the tools'.
    ok = logger:remove_handler(default),
    ok = logger:add_handler(default, logger_std_h, #{config => #{type => standard_error}}),
    main(init:get_plain_arguments()).

main(Argv) ->
    Args = parse(Argv, #{}),
    {ok, _} = application:ensure_all_started(ssl),
    Library = library(),
    GenTcp = gen_tcp_library(),
    maps:is_key("list", Args) andalso begin io:format("~s~n~s plaintext~n", [Library, GenTcp]), erlang:halt(0) end,
    Lib = maps:get("library", Args, ""),
    Echo = maps:is_key("echo", Args),
    Mod = if
              Lib =:= "erlang-ssl"; Lib =:= Library -> ssl;
              Lib =:= "erlang-gen_tcp"; Lib =:= GenTcp ->
                  Echo orelse maps:is_key("probe", Args)
                      orelse fail(2, "--library ~s serves --echo only (plaintext TCP)", [GenTcp]),
                  gen_tcp;
              true -> fail(2, "--library ~p: this server has ~s (erlang-ssl) and ~s (erlang-gen_tcp, --echo)",
                           [Lib, Library, GenTcp])
          end,
    Row = case Mod of ssl -> Library; gen_tcp -> GenTcp end,
    P = params(Args),
    CertsDir = case os:getenv("TLS_BENCH_CERTS_DIR") of
                   Dir when Dir =/= false, Dir =/= "" -> Dir;
                   _ -> maps:get("certs-dir", Args, false)
               end,
    CertsDir =:= false andalso fail(2, "--certs-dir: the certificates' directory is needed", []),
    Options = case Mod =:= gen_tcp orelse options(P, CertsDir) of
                  true -> [];
                  {unsupported, Why} ->
                      maps:is_key("probe", Args) andalso begin io:format("unsupported: ~s~n", [Why]), erlang:halt(0) end,
                      fail(1, "~s ~s: ~s", [Library, maps:get(id, P), Why]);
                  {failed, Why} -> fail(1, "~s ~s: ~s", [Library, maps:get(id, P), Why]);
                  {ok, O} -> O
              end,
    BodyLen = integer("body", maps:get("body", Args, "1024"), 0),
    Max = integer("max-connections", maps:get("max-connections", Args, "10000"), 1),
    Hs = duration("handshake-timeout", maps:get("handshake-timeout", Args, "10s")),
    Idle = duration("idle-timeout", maps:get("idle-timeout", Args, "60s")),
    maps:is_key("threads", Args) andalso integer("threads", maps:get("threads", Args), 1),
    Listen = maps:get("listen", Args, "127.0.0.1:4433"),
    {Host, Port} = case string:split(Listen, ":", trailing) of
                       [H, Pt] -> {string:trim(H, both, "[]"), integer("listen", Pt, 0)};
                       _ -> fail(2, "--listen ~p: an address and a port", [Listen])
                   end,
    {ok, Ip} = case inet:parse_address(Host) of
                   {ok, A} -> {ok, A};
                   _ -> fail(2, "--listen ~p: an IP address and a port", [Listen])
               end,
    %% A probe checks the options by listening, on a free port (two probes
    %% at once, or a server on the default port, do not collide).
    ListenPort = case maps:is_key("probe", Args) of true -> 0; false -> Port end,
    Listened = case Mod of
                   ssl -> ssl:listen(ListenPort, [{ip, Ip} | Options]);
                   gen_tcp -> gen_tcp:listen(ListenPort, [binary, {ip, Ip}, {active, false}, {reuseaddr, true},
                                                    {backlog, 4096}, {nodelay, true}])
               end,
    L = case Listened of
            {ok, Sock} -> Sock;
            {error, Reason} ->
                maps:is_key("probe", Args) andalso fail(1, "~s ~s: ~p", [Library, maps:get(id, P), Reason]),
                fail(1, "listening on ~s: ~p", [Listen, Reason])
        end,
    maps:is_key("probe", Args) andalso begin io:format("supported~n"), erlang:halt(0) end,
    Cores = case maps:get("cores", Args, "") of
                "" -> [];
                Cs ->
                    List = [integer("cores", C, 0) || C <- string:split(Cs, ",", all)],
                    Cmd = "taskset -a -p -c " ++ Cs ++ " " ++ os:getpid() ++ " >/dev/null 2>&1 && echo ok",
                    string:trim(os:cmd(Cmd)) =:= "ok" orelse fail(1, "pinning to cores ~s (taskset) failed", [Cs]),
                    List
            end,
    Json = maps:get("json", Args, false),
    Json =/= false andalso begin
        ok = filelib:ensure_dir(Json),
        Existed = filelib:is_regular(Json),
        case file:open(Json, [append]) of
            {ok, Fd} -> file:close(Fd), Existed orelse file:delete(Json);
            {error, E} -> fail(1, "--json ~s: ~p", [Json, E])
        end
    end,
    Body = pattern(BodyLen),
    C = counters:new(9, [write_concurrency]),
    F = spawn(fun() -> failures(#{}, []) end),
    St = #{counters => C, failures => F, p => P, max => Max, handshake_timeout => Hs, idle_timeout => Idle,
           body_len => BodyLen, mod => Mod, echo => Echo,
           response => iolist_to_binary([<<"HTTP/1.1 200 OK\r\nContent-Length: ">>, integer_to_list(BodyLen),
                                         <<"\r\n\r\n">>, Body])},
    gen_event:delete_handler(erl_signal_server, erl_signal_handler, []),
    ok = gen_event:add_handler(erl_signal_server, ?MODULE, self()),
    os:set_signal(sigterm, handle),
    {ok, {BoundIp, BoundPort}} = case Mod of ssl -> ssl:sockname(L); gen_tcp -> inet:sockname(L) end,
    Bound = inet:ntoa(BoundIp) ++ ":" ++ integer_to_list(BoundPort),
    Started = erlang:monotonic_time(microsecond),
    {CpuStart, _} = statistics(runtime),
    Sampler = spawn(fun() -> sample([rss_kib()]) end),
    spawn(fun() -> acceptor(L, St) end),
    What = case Echo of true -> "echo"; false -> io_lib:format("HTTPS, ~B B bodies", [BodyLen]) end,
    io:format("serving ~s ~s, ~s on ~s~n", [Row, What, maps:get(id, P), Bound]),
    receive stop -> ok end,
    Mod:close(L),
    %% ssl closes a failed handshake's socket before it returns the error:
    %% a client may see the close before the failure is counted. Counted
    %% once the connections have ended (at most 1 s: kept ones stay open).
    drain(C, erlang:monotonic_time(millisecond) + 1000),
    Sampler ! {stop, self()},
    Samples = receive {samples, Ss} -> Ss end,
    Seconds = (erlang:monotonic_time(microsecond) - Started) / 1.0e6,
    {CpuEnd, _} = statistics(runtime),
    Cpu = (CpuEnd - CpuStart) / 1000,
    F ! {report, self()},
    {Errors, Examples} = receive {failures, Es, Ex} -> {Es, Ex} end,
    G = fun(Slot) -> counters:get(C, Slot) end,
    Handshakes = G(?FULL) + G(?RESUMED),
    Summary = #{
        <<"library">> => str(Row), <<"parameters">> => str(maps:get(id, P)), <<"listen">> => str(Bound),
        <<"seconds">> => Seconds, <<"connections">> => G(?CONNECTIONS), <<"over_limit">> => G(?OVER_LIMIT),
        <<"evicted">> => 0, <<"handshakes_full">> => G(?FULL), <<"handshakes_resumed">> => G(?RESUMED),
        <<"idle_closed">> => G(?IDLE_CLOSED), <<"requests">> => G(?REQUESTS), <<"http2">> => 0,
        <<"bytes_received">> => G(?BYTES_RECEIVED), <<"bytes_sent">> => G(?BYTES_SENT), <<"cpu_seconds">> => Cpu,
        <<"cpu_us_per_handshake">> => case Handshakes of 0 -> null; _ -> Cpu / Handshakes * 1.0e6 end,
        <<"cores">> => Cores,
        <<"errors">> => maps:from_list([{str(K), V} || {K, V} <- maps:to_list(Errors)]),
        <<"error_examples">> => [str(E) || E <- Examples],
        %% The tools compute the trace's figures from the samples (RssTrace::of).
        <<"rss">> => #{<<"interval_s">> => ?RSS_INTERVAL_MS / 1000, <<"samples_kib">> => Samples,
                       <<"start_kib">> => hd(Samples), <<"peak_kib">> => lists:max(Samples),
                       <<"end_kib">> => lists:last(Samples), <<"slope_last_half_kib_per_min">> => null}},
    io:format("~s: ~B connections, ~B full and ~B resumed handshakes, ~B requests in ~.1f s; ~.2f CPU s; errors ~p~n",
              [Row, G(?CONNECTIONS), G(?FULL), G(?RESUMED), G(?REQUESTS), Seconds, Cpu, Errors]),
    Json =/= false andalso begin
        case file:write_file(Json, [json(Summary), "\n"]) of
            ok -> ok;
            {error, E2} -> fail(1, "writing --json ~s: ~p", [Json, E2])
        end
    end,
    erlang:halt(0).

drain(C, Deadline) ->
    case counters:get(C, ?ACTIVE) > 0 andalso erlang:monotonic_time(millisecond) < Deadline of
        true -> timer:sleep(10), drain(C, Deadline);
        false -> ok
    end.

sample(Acc) ->
    receive
        {stop, From} -> From ! {samples, lists:reverse([rss_kib() | Acc])}
    after ?RSS_INTERVAL_MS -> sample([rss_kib() | Acc])
    end.
