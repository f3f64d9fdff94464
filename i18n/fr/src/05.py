FR = {}
FR["fd85c103"] = """# Chapitre 5 — Répétition et absence de progrès

**Durée :** environ 35 minutes.

**Prérequis :** les chapitres 1 à 4, en particulier l'ordre de la garde et la règle de répétition ;
les objets et tableaux JSON.

« L'agent est bloqué » peut vouloir dire deux choses différentes. Soit il redemande *exactement le
même appel* (une répétition), soit il demande un appel *différent* à chaque fois sans jamais aboutir
(une absence de progrès). labkit nomme précisément le premier cas et borne le second par un budget,
sans prétendre mesurer le progrès.

**Ce que vous saurez faire**

- calculer la **signature** d'un appel : le nom de l'outil suivi de ses arguments canoniques ;
- appliquer les règles canoniques à des paires d'arguments JSON (nombres, ordre des clés, casse,
  espaces, tableaux, `null`, booléens) et dire quelles paires forment un seul appel ;
- suivre, un par un, les appels d'une même réponse du modèle à travers la garde ;
- dire quelles limites peuvent borner un modèle qui ne demande jamais deux fois la même chose, et
  prédire laquelle se prononce la première."""
FR["e04f4e85"] = """## Une signature

La garde calcule la signature sur les arguments **après** leur liaison typée aux types de l'outil,
puis en fait un texte JSON canonique :"""
FR["f67d5c25"] = """## Les règles canoniques, en pratique

Chaque paire ci-dessous réunit deux textes JSON qu'un modèle pourrait envoyer. `same` indique s'ils
forment une seule et même valeur pour la garde. Ajoutez vos propres paires au dictionnaire et
réexécutez la cellule."""
FR["8e93c3a2"] = """Lisez les règles dans le tableau :

- les **nombres** sont des décimaux exacts : `42`, `42.0` et `4.2e1` sont donc un seul nombre (les
  très grands nombres ne sont pas arrondis en passant par les flottants : `2**53 + 1` reste distinct
  de `2**53`) ;
- les **clés d'objet** sont triées par point de code : leur ordre ne compte donc jamais ;
- les **chaînes** sont comparées exactement : la casse et les espaces comptent. La garde ne devine
  pas que `"Login"` et `"login "` veulent dire la même chose ;
- les **tableaux** gardent leur ordre ; **`null`** est une valeur ; **`true`** n'est jamais le
  nombre `1`.

Les mêmes fonctions sont publiques, pour un coup d'œil rapide :"""
FR["400845dd"] = """## Les mêmes règles dans une vraie garde

Le texte canonique n'est que la moitié de l'affaire : la garde commence par **lier** les arguments
aux types déclarés. Voici un petit outil qui prend une chaîne et une liste d'entiers. (Son corps ne
trouve rien ; seule la garde nous intéresse ici.)"""
FR["8f831bce"] = """Le périmètre qui va le garder autorise 10 tentatives au total, mais une seule par signature. Voici
cinq appels tels qu'un modèle les enverrait ; aucun n'est une paire du tableau : appliquez donc les
règles à chacun, dans l'ordre, et prédisez combien la garde en admet avant de s'arrêter."""
FR["46f66172#hint"] = """Calculez les arguments canoniques de chaque appel avec les règles du tableau : la garde s'arrête au premier appel dont elle a déjà admis la signature une fois."""
FR["scope-intro"] = """Un périmètre neuf pour ces cinq appels (avec un délai d'une heure : l'horloge d'un périmètre
utilisé directement démarre à son premier appel, et les 120 s par défaut pourraient s'écouler
pendant que vous lisez). La cellule crée son propre périmètre : vous pouvez donc la réexécuter."""
FR["five-calls-read"] = """L'appel 2 a un élément de plus : un tableau garde sa longueur et son ordre, c'est donc une nouvelle
signature. L'appel 3 écrit `1` sous la forme `1.0` et déplace les clés, ce qui ne compte pas, mais
son tableau est dans l'autre ordre, ce qui compte : nouvelle signature, là encore. L'appel 4 ne
diffère de l'appel 1 que par l'ordre des clés et l'écriture de ses nombres (`1.0`, `2e0`) ; une fois
lié à `list[int]`, c'est de nouveau le premier appel, et la règle de répétition l'a refusé. L'appel
5, copie exacte de l'appel 1, n'a jamais eu son tour : l'exécution était déjà arrêtée.

La liaison typée décide aussi de ce qui parvient jusqu'à la signature. `read_ticket` déclare un
entier : `true` ne devient donc jamais `1`, la liaison échoue et l'appel n'est jamais compté."""
FR["4fc955e0"] = """## Prédire : trois appels dans une seule réponse

Un modèle peut demander plusieurs outils dans une même réponse (un *lot*) ; la boucle les exécute
l'un après l'autre, dans l'ordre de la liste. Celui-ci assure ses arrières : dans une seule réponse,
il demande de lire le ticket 42, encore le ticket 42 écrit `42.0`, puis le ticket 7."""
FR["hedging-ask"] = """Limites par défaut, les deux capacités accordées. Prédisez le statut, le nombre de `ToolCall` et
le nombre de corps de `read_ticket` exécutés. Attention au troisième appel : sa signature est
nouvelle."""
FR["0b3fbb83#hint"] = """Liez `42.0` à l'entier déclaré et comparez les signatures ; rappelez-vous ensuite ce qu'un arrêt fait aux appels qui le suivent dans la même réponse."""
FR["hedge-read"] = """`42.0` se lie à l'entier `42` : le deuxième appel avait donc la signature du premier, et la règle
de répétition a arrêté l'exécution. Le troisième appel, `read_ticket(7)`, avait une signature
nouvelle, mais son tour est venu après l'arrêt : le premier arrêt l'emporte, aucune règle ne l'a
donc jugé, le middleware ne l'a pas enregistré et son corps ne s'est jamais exécuté. Chaque appel a
tout de même reçu exactement un résultat, et le troisième nomme l'arrêt qu'il a suivi (« the run
was already stopped: RepeatedCall »), et non une règle qui l'aurait jugé :"""
FR["hedge-timeline-read"] = """La chronologie montre l'unique appel modèle, les deux appels parvenus jusqu'au middleware et à la
garde, et un seul corps :"""
FR["6c9d909f"] = """## Prédire : un modèle qui ne se répète jamais

Ce modèle demande `read_ticket(1)` à son premier appel, `read_ticket(2)` au deuxième, puis 3, et
ainsi de suite : un nouvel identifiant à chaque appel, et chaque réponse est `NotFound`. Il ne dit
jamais qu'il a terminé. Les deux capacités sont accordées. Cet hôte autorise **4** appels modèle et
**6** tentatives d'outil, et garde une tentative par signature.

Quelle règle l'arrête, et après combien d'événements `ToolCall` ? Prédisez pour les deux agents."""
FR["848882c6#hint"] = """Chaque signature est nouvelle : la règle de répétition reste donc muette. Comptez ce qu'il reste à chacune des autres limites après chaque appel modèle : laquelle s'épuise la première ?"""
FR["changing-named"] = """Ce modèle est le scénario `changing` du cours."""
FR["5d5dddc5"] = """C'est le budget d'appels modèle qui a décidé l'arrêt : c'est la ligne mise en évidence, dans les
deux panneaux. Le cinquième appel modèle a été refusé avant d'être envoyé, alors que deux des six
tentatives d'outil restaient inutilisées. La barre par signature est pleine (chaque identifiant a eu
sa tentative), mais elle n'est pas mise en évidence : aucune signature n'a été demandée deux fois, la
règle de répétition n'a donc jamais rien refusé."""
FR["bodies-read"] = """Quatre corps se sont exécutés, et aucun n'a lu le ticket 42 :"""
FR["e1cea82d"] = """labkit n'essaie pas de mesurer le « progrès » : pas de score de similarité entre les appels, pas de
compteur d'erreurs consécutives. Ce seraient des suppositions sur le sens. Les budgets sont de
simples comptes, qui bornent ce cas sans rien deviner.

## Auto-vérification"""
FR["a7ecd301"] = """## Explorer

Exécutez `changing`, puis `repeat`, chacun avec deux tentatives par signature. Prédisez d'abord :
sur lequel des deux le changement a-t-il un effet, et pourquoi pas sur l'autre ?"""
FR["questions"] = """## Questions

**1.** Pourquoi calculer la signature après la liaison typée plutôt que sur le texte JSON brut ?

<details><summary>Réponse</summary>

Une même valeur peut s'écrire de bien des façons (`42`, `42.0`, `4.2e1`, des clés dans n'importe
quel ordre). La liaison donne la valeur que le corps recevrait vraiment : la signature compare donc
ce qui *s'exécuterait*, et non la façon dont c'était écrit ; sur le texte brut, un modèle pourrait
contourner la règle en reformulant le même appel. La liaison écarte aussi ce qui n'est pas une
valeur du type déclaré (`true` pour un entier), avant que quoi que ce soit ne soit compté.

</details>

**2.** Un modèle envoie `{"query": "login"}`, puis `{"query": "LOGIN"}`. L'hôte doit-il les traiter
comme un seul appel ? Qui doit en décider, et où ?

<details><summary>Réponse</summary>

Pas la garde : elle ne peut pas savoir si la casse compte pour cet outil, elle compare donc
exactement. C'est l'auteur de l'outil qui le sait ; si la recherche ignore la casse, le type
d'argument déclaré par l'outil peut normaliser la valeur (par exemple un validateur qui la met en
minuscules). La liaison produit alors une seule valeur, et la garde, inchangée, voit une seule
signature.

</details>

**3.** Le modèle qui ne se répète jamais, avec **3** tentatives par signature (les autres limites
par défaut) : son statut ou son nombre de `ToolCall` change-t-il ? Pourquoi ?

<details><summary>Réponse</summary>

Ni l'un ni l'autre. Avec les limites par défaut, il se termine en `ToolBudget` après 4 événements
`ToolCall`, et avec 3 tentatives par signature il se termine de la même façon (l'exécution de ce
chapitre s'est arrêtée plus tôt, en `ModelBudget`, uniquement parce que sa limite d'appels modèle
était de 4). Chaque signature est nouvelle : chacune a donc utilisé 1 des 3 tentatives désormais
permises, et la limite par signature n'est jamais près de refuser quoi que ce soit. Assouplir la
règle de répétition ne peut ni aider ni gêner un modèle qui ne se répète jamais ; seul le budget
d'outils (ou le budget d'appels modèle) le borne.

</details>

**4.** Dans la réponse qui assure ses arrières, qu'est-ce qui changerait si le troisième appel
venait en premier dans la liste ?

<details><summary>Réponse</summary>

`read_ticket(7)` serait admis et son corps s'exécuterait (`NotFound`), puis `read_ticket(42)` serait
admis à son tour, et `42.0` serait refusé comme répétition : `RepeatedCall` avec 2 événements
`ToolCall`. Les appels d'une réponse se présentent à la garde l'un après l'autre, dans l'ordre de la
liste.

</details>"""
FR["key-points"] = """## Points clés

- Une signature, c'est le nom de l'outil suivi du JSON canonique des arguments liés.
- Un seul nombre, un seul ordre de clés : `42`, `42.0` et `4.2e1` se confondent, des clés réordonnées
  aussi. La casse, les espaces, l'ordre des tableaux, `null` et les booléens ne sont jamais
  gommés.
- Les appels d'une même réponse s'exécutent l'un après l'autre ; une répétition arrête l'exécution
  et les appels suivants ne s'exécutent jamais, même un appel nouveau : le premier arrêt l'emporte.
- Un modèle qui ne se répète jamais échappe à la règle de répétition ; c'est un budget qui l'arrête :
  ici le budget d'appels modèle, alors qu'il restait des tentatives d'outil.

**Pour aller plus loin**

- Ajoutez à `pairs` une paire avec un très grand entier, par exemple `9007199254740993` contre
  `9007199254740992.0`.
- Exécutez `labkit.run("changing", limits=labkit.Limits(repetitions=3))` et vérifiez votre réponse
  à la question 3.
- Ensuite : le chapitre 6 compte les appels modèle et borne le temps."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- « La détection des répétitions est approximative » (des appels semblables comptent comme des
  répétitions). Elle est exacte, sur les arguments canoniques après liaison ; `Login` et `login`
  sont deux appels différents.
- « Une répétition veut dire que le modèle n'a pas progressé, et pas de répétition veut dire qu'il
  progresse. » `changing` ne se répète jamais et n'aboutit à rien ; seul le budget le borne.
- « Un lot, c'est tout ou rien » ou « chaque appel d'un lot est jugé sur ses propres mérites ». Les
  appels se présentent à la garde l'un après l'autre, dans l'ordre ; après un arrêt, les suivants
  n'atteignent jamais ni une règle ni un corps.
- « Une barre pleine dans le graphique veut dire que cette règle s'est déclenchée. » Seule la ligne
  mise en évidence a décidé l'arrêt ; un compteur peut être à sa limite sans avoir rien refusé.

**Pistes de discussion**

- Voudriez-vous en production un détecteur sémantique de « progrès » ? Que coûterait un faux
  positif ?
- Pour lesquels de vos outils fixeriez-vous `repetitions` au-dessus de 1 (interroger régulièrement l'état d'un
  traitement ?), et qu'est-ce qui bornerait alors la boucle ?

</details>"""
