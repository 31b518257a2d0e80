package host

import (
	"strings"

	"github.com/netmortem/netmortem/model"
)

// localizedErrors are the C library's words for the connect errors the
// clients print (strerror), in the locales tickets come in: curl, wget,
// nc and telnet on a host whose LANG is not English print "curl: (7)
// Failed connect to 10.0.0.5:80; 连接超时". They are glibc 2.36's, as
// strerror gives them under each locale, lower-cased: ETIMEDOUT,
// ECONNREFUSED, EHOSTUNREACH and ENETUNREACH.
var localizedErrors = []struct {
	words   string
	outcome model.ClientOutcome
}{
	{"连接超时", model.ClientTimeout},
	{"拒绝连接", model.ClientRefused},
	{"没有到主机的路由", model.ClientNoRoute},
	{"网络不可达", model.ClientNetUnreachable},
	{"連線超過時間", model.ClientTimeout},
	{"連線被拒絕", model.ClientRefused},
	{"找不到通往該主機的路由路徑", model.ClientNoRoute},
	{"無法接觸網路", model.ClientNetUnreachable},
	{"接続がタイムアウトしました", model.ClientTimeout},
	{"接続を拒否されました", model.ClientRefused},
	{"ホストへの経路がありません", model.ClientNoRoute},
	{"ネットワークに届きません", model.ClientNetUnreachable},
	{"연결 시간 초과", model.ClientTimeout},
	{"연결이 거부됨", model.ClientRefused},
	{"호스트로 갈 루트가 없음", model.ClientNoRoute},
	{"네트워크가 접근 불가능합니다", model.ClientNetUnreachable},
	{"die wartezeit für die verbindung ist abgelaufen", model.ClientTimeout},
	{"verbindungsaufbau abgelehnt", model.ClientRefused},
	{"keine route zum zielrechner", model.ClientNoRoute},
	{"das netzwerk ist nicht erreichbar", model.ClientNetUnreachable},
	{"connexion terminée par expiration du délai d'attente", model.ClientTimeout},
	{"connexion refusée", model.ClientRefused},
	{"aucun chemin d'accès pour atteindre l'hôte cible", model.ClientNoRoute},
	{"le réseau n'est pas accessible", model.ClientNetUnreachable},
	{"expiró el tiempo de conexión", model.ClientTimeout},
	{"conexión rehusada", model.ClientRefused},
	{"no existe ninguna ruta hasta el `host'", model.ClientNoRoute},
	{"la red es inaccesible", model.ClientNetUnreachable},
	{"tempo esgotado para conexão", model.ClientTimeout},
	{"conexão recusada", model.ClientRefused},
	{"não há rota para o host", model.ClientNoRoute},
	{"a rede está fora de alcance", model.ClientNetUnreachable},
	{"время ожидания соединения истекло", model.ClientTimeout},
	{"в соединении отказано", model.ClientRefused},
	{"нет маршрута до узла", model.ClientNoRoute},
	{"сеть недоступна", model.ClientNetUnreachable},
	{"connessione scaduta", model.ClientTimeout},
	{"connessione rifiutata", model.ClientRefused},
	{"nessun instradamento per l'host", model.ClientNoRoute},
	{"la rete non è raggiungibile", model.ClientNetUnreachable},
}

// classifyLocalized is classify for an error in another language than
// English: the outcome of the C library's words in m, lower-cased; ""
// when it holds none.
func classifyLocalized(m string) model.ClientOutcome {
	for _, e := range localizedErrors {
		if strings.Contains(m, e.words) {
			return e.outcome
		}
	}
	return ""
}
