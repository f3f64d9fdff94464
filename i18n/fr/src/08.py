FR = {}
FR["4ef8464b"] = """# Chapitre 8 — Observer le contrôle et tester ses cas limites

**Durée :** environ 45 minutes.

**Prérequis :** les chapitres 4 à 7 (l'ordre de la garde, les signatures, les budgets, les statuts).

Les événements sont la façon dont l'hôte montre son travail. Dans ce chapitre, vous les lisez de
près (ce que signifient chaque type et chaque compteur, où se place le middleware), puis vous mettez
la garde à l'épreuve là où une boucle n'irait jamais : appels en streaming, plusieurs appels dans
une même réponse, et de nombreux threads à la fois.

**Ce que vous saurez faire**

- lire le `count` de chaque type d'événement de contrôle, et dire ce que les événements ne
  contiennent jamais ;
- placer le middleware et la garde sur le trajet d'un appel, et dire lequel des deux décide ;
- prédire les compteurs d'une exécution en streaming ;
- écrire les événements d'une réponse dont les appels se heurtent à deux règles différentes ;
- prédire combien de threads en concurrence une limite admet ;
- lire une exécution sous forme de spans OpenTelemetry, et borner un vrai modèle de la même façon."""
FR["1c1f320b"] = """## Anatomie d'un événement

Chaque événement a un `kind` (son type), un `name` et un `count`. Le compte n'est **pas** toujours
« le nombre d'événements de ce type jusqu'ici » : chaque type compte quelque chose qui lui est
propre.

| type | nom | compte |
|---|---|---|
| `ModelCall` | `model` | les appels modèle admis jusqu'ici, celui-ci compris |
| `Middleware` | l'outil | les appels que le middleware a observés jusqu'ici dans l'exécution, tous outils confondus, celui-ci compris |
| `ToolCall` | l'outil | les tentatives d'outil admises jusqu'ici, tous outils confondus, celle-ci comprise |
| `PermissionDenied` | l'outil | les tentatives d'outil admises avant l'appel refusé |
| `ToolBudget` | l'outil | les tentatives d'outil admises : la limite atteinte |
| `RepeatedCall` | l'outil | les tentatives que cette signature avait déjà eues : la limite par signature |
| `ModelBudget` | `model` | les appels modèle admis : la limite atteinte |
| `DeadlineExceeded` | `run` | les tentatives d'outil admises au moment où le délai a expiré |
| `ProviderUnavailable` | `model` | les appels modèle admis, y compris celui qui a échoué |

Les arguments et les signatures ne figurent jamais dans un événement : ils restent dans la mémoire
du périmètre d'exécution. Un `ToolCall` est enregistré au moment où la garde admet une tentative,
donc avant que son corps s'exécute."""
FR["4a24fe8f"] = """## Le middleware observe, la garde décide

La boucle fait passer chaque invocation d'outil par une chaîne de middlewares. Le middleware de
labkit vérifie l'annulation et enregistre `Middleware`, puis transmet l'appel à la garde. Un appel
refusé montre donc un événement `Middleware` sans `ToolCall` derrière lui. Un middleware peut
observer, journaliser ou ajouter ses propres vérifications, mais ce n'est pas lui le verrou : un
appel direct ne passe jamais par lui, et la garde s'exécute quand même.

## Prédire : une exécution en streaming

Avec `stream=True`, chaque réponse arrive en morceaux. Ce modèle bien sage lit le ticket 42, termine
la revue, puis envoie sa phrase finale en **douze** morceaux. Combien d'événements `ModelCall`
l'exécution enregistrera-t-elle, et quel est le `count` du dernier ?"""
FR["c150ba47#hint"] = """Un appel modèle est-il compté quand sa requête part, ou pour chaque morceau de sa réponse ? Comptez les réponses."""
FR["streaming-counted"] = """Douze morceaux, un seul appel : le client de comptage compte chaque appel une fois, avant son premier
morceau, au même endroit qu'un appel sans streaming. Sa réponse est reconstituée à partir des
morceaux avant que la boucle ne la lise.

## Trois règles dans une seule réponse

Un modèle peut demander plusieurs outils dans une même réponse ; la boucle de labkit les exécute
l'un après l'autre, dans l'ordre où le modèle les a listés (les exécuter en parallèle est une option
explicite, désactivée par défaut). Cette réponse demande trois appels ; l'hôte n'a accordé que
`ticket.read` et n'autorise **qu'une** tentative d'outil :

1. `read_ticket(42)`
2. `finish_review(42)`
3. `read_ticket(42.0)`

Trois règles pourraient refuser quelque chose ici : la règle des permissions, le budget d'outils et
la règle de répétition. Prédisez le statut, le nombre de `ToolCall` et le tableau complet des
événements, chacun sous la forme `(kind, name, count)`, dans l'ordre."""
FR["9ff939a2#hint"] = """Prenez les appels dans l'ordre. Quel est le premier qu'une règle refuse, et peut-on encore enregistrer quoi que ce soit une fois l'exécution arrêtée ?"""
FR["fe319061"] = """Le deuxième appel s'est heurté à deux règles à la fois : `review.finish` n'est pas accordée, et
l'unique tentative d'outil était déjà utilisée. La garde vérifie la permission avant le budget
(chapitre 4) : l'arrêt est donc `PermissionDenied`, et le budget n'a jamais eu son mot à dire. Le
troisième appel, `42.0`, aurait été une répétition du premier (chapitre 5), mais le premier arrêt
l'emporte : une fois l'exécution arrêtée, plus rien n'est vérifié ni enregistré, d'où l'absence
d'événement `RepeatedCall` et d'événement `Middleware` pour lui. Chaque identifiant d'appel demandé
reçoit malgré tout exactement une réponse dans la transcription :"""
FR["5eb87147"] = """## Plusieurs threads, une seule garde

Cette fois, pas de boucle du tout. Dix threads appellent directement le même outil gardé, libérés
au même instant, face à un budget de quatre tentatives d'outil. Deux courses : dans la première,
chaque thread demande un identifiant de ticket différent ; dans la seconde, les dix demandent
`read_ticket(42)`. Combien de corps s'exécutent dans chaque cas ? (Le délai d'une heure ne sert qu'à
écarter l'horloge du périmètre d'exécution, qui démarre à son premier appel.)"""
FR["2acb2fa5#hint"] = """Des identifiants différents ne répètent jamais une signature ; des identifiants identiques, si. Pour chaque course, quelle limite est atteinte la première, quel que soit l'ordonnancement des threads ?"""
FR["78408dac"] = """Quels threads l'emportent, c'est l'affaire de l'ordonnanceur ; et un thread admis dont le corps
s'exécutait encore quand le refus a arrêté le périmètre lève lui aussi une exception (la garde
vérifie de nouveau après le corps). Lisez donc les compteurs : exactement quatre corps exécutés
avec des identifiants différents, exactement un avec le même identifiant, et un seul arrêt à chaque
fois : `ToolBudget` avec le compte 4, `RepeatedCall` avec le compte 1. Les compteurs et la
réservation partagent un même verrou : c'est ce qui rend les comptes exacts. Et chacun des dix
threads a reçu une réponse, un résultat ou un refus, dans les deux courses :"""
FR["spans"] = """## Voir une exécution sous forme de spans

L'hôte peut aussi rapporter chaque exécution, chaque appel modèle et chaque appel d'outil sous la
forme d'un span OpenTelemetry. Les spans portent des noms, des compteurs et des statuts, jamais
d'arguments ni le contenu des messages. Chaque span enveloppe une étape telle que la boucle
l'accomplit : l'exécution entière (`invoke_agent`), chaque appel modèle que fait la boucle (`chat`)
et chaque appel d'outil qu'elle invoque (`execute_tool`) ; la garde s'exécute à l'intérieur du span
de l'appel d'outil, si bien que sa décision devient l'issue de ce span. Prenez le modèle bien sage,
**sans** accorder `ticket.read` : son premier appel est donc refusé. Avant de regarder : combien de
spans `chat` (appels modèle) et combien de spans `execute_tool` (appels d'outil) l'exécution
rapportera-t-elle ?"""
FR["spans-predict#hint"] = """Suivez l'exécution pas à pas : combien d'appels modèle la boucle fait-elle avant l'arrêt, et combien d'appels d'outil invoque-t-elle ? La garde décide à l'intérieur du span d'un appel d'outil, pas avant."""
FR["spans-read"] = """Le `read_ticket` refusé a tout de même son span `execute_tool` : le modèle l'a demandé, donc l'hôte
le rapporte, avec l'issue `refused` et la raison dans `error`. Son parent est le span `invoke_agent`
de l'exécution, qui porte le statut et les compteurs."""
FR["aecaa977"] = """## Ce que prouvent ces fixtures

Les modèles scriptés rendent chaque exécution reproductible. Ils prouvent des propriétés
d'**orchestration, de comptage et d'autorisation** : quels appels ont été admis, dans quel ordre,
et pourquoi l'exécution s'est arrêtée. Ils ne mesurent pas la qualité d'un vrai modèle, et ne
montrent pas une résistance aux attaques en général."""
FR["live"] = """## Essayer avec un vrai modèle (facultatif)

Jusqu'ici, tout a utilisé un modèle scripté. Avec un serveur de modèle sur votre machine (le
`make real-model` du projet, ou Ollama, LM Studio, llama.cpp, vLLM : tout ce qui parle l'API de chat
compatible OpenAI), le *même* périmètre d'exécution, la même garde et les mêmes compteurs bornent
un vrai modèle : le scénario prête ses autorisations et ses limites, les réponses sont celles du
modèle. L'[annexe A](appendix_a_real_model.ipynb) vous guide pas à pas : les instructions envoyées
au modèle, le démarrage d'un serveur, chaque scénario exécuté en direct, avec et sans streaming, et
ce qu'un vrai modèle fait différemment."""
FR["self-check-heading"] = """## Auto-vérification"""
FR["41084aa0"] = """## Explorer

Exécutez `repeat` et `changing` et lisez le tableau des événements : trouvez l'événement
`Middleware` qui n'est suivi d'aucun `ToolCall`, et comparez le `count` de chaque arrêt au tableau
du début de ce chapitre. Prédisez ensuite un script mystère avec le panneau : lisez ses étapes,
choisissez un statut et un nombre de `ToolCall`, puis appuyez sur *Run and check*. (Le panneau
d'exploration s'exécute avec exactement les limites qu'affichent ses curseurs ; son curseur de délai
s'arrête à 5 s.)"""
FR["questions"] = """## Questions

**1.** Pourquoi le deuxième appel de la réponse à trois appels, pourtant refusé, apparaît-il comme
un événement `Middleware`, alors que le troisième n'apparaît pas ?

<details><summary>Réponse</summary>

Les appels s'exécutent l'un après l'autre, et le middleware passe avant la garde : le deuxième
appel l'a atteint (il enregistre `Middleware` 2), puis la garde l'a refusé et a enregistré l'arrêt.
Quand le tour du troisième appel est venu, l'exécution était déjà arrêtée, et rien n'est enregistré
pour une exécution arrêtée (le middleware de labkit vérifie d'abord l'annulation, avant
d'enregistrer quoi que ce soit). L'identifiant du troisième appel reçoit tout de même exactement une
réponse dans la transcription, qui dit que l'exécution était déjà arrêtée.

</details>

**2.** Même réponse, mais l'hôte accorde désormais aussi `review.finish` et autorise trois
tentatives d'outil. Sur quoi se termine l'exécution, la revue est-elle terminée, et quels sont les
événements ?

<details><summary>Réponse</summary>

`RepeatedCall`, et oui, la revue est terminée. La lecture est admise, puis `finish_review(42)`
(accordée cette fois, 2 tentatives sur 3) s'exécute et réussit ; le troisième appel,
`read_ticket(42.0)`, a la signature du premier et il est refusé. L'arrêt nomme la règle, pas le
travail accompli : le texte est retenu, comme au chapitre 6. Événements : `ModelCall model 1`,
`Middleware read_ticket 1`, `ToolCall read_ticket 1`, `Middleware finish_review 2`,
`ToolCall finish_review 2`, `Middleware read_ticket 3`, `RepeatedCall read_ticket 1`.

</details>

**3.** Quelle propriété de la garde serait cassée si la vérification du budget et la réservation
utilisaient deux verrous distincts ?

<details><summary>Réponse</summary>

L'exactitude en situation de concurrence. Deux threads pourraient tous deux passer la vérification
« 3 admises < 4 » avant que l'un ou l'autre n'ait réservé, et être admis tous les deux : cinq
tentatives pour une limite de quatre. La vérification et la réservation doivent former une seule
étape, sous un seul verrou (il en va de même pour le compte par signature).

</details>

**4.** Un événement `RepeatedCall` a le compte 1 et un événement `ToolBudget` le compte 4.
Pourquoi ne peut-on pas comparer ces deux nombres ?

<details><summary>Réponse</summary>

Ils ne comptent pas la même chose. `RepeatedCall` compte les tentatives d'une signature (ici 1, la
limite par signature) ; `ToolBudget` compte toutes les tentatives d'outil admises (ici 4, le budget
d'outils). Lisez toujours un compte avec son type.

</details>"""
FR["key-points"] = """## Points clés

- Les événements enregistrent le type, le nom et le compte, jamais les arguments. Le compte de
  chaque type dit quelque chose qui lui est propre : les appels admis pour `ModelCall` et
  `ToolCall`, les observations pour `Middleware`, le compteur que la règle a lu pour un arrêt.
- Le middleware observe avant la garde ; l'autorisation se trouve dans la garde.
- Les appels modèle, en streaming ou non, sont comptés une fois chacun, en un seul endroit.
- Le premier arrêt l'emporte : après lui, aucune règle n'est consultée et aucun événement n'est
  enregistré.
- Les appels d'une même réponse passent devant la garde l'un après l'autre, dans l'ordre de la
  liste ; des appels venant de nombreux threads à la fois sont admis exactement jusqu'à la limite,
  jamais un de plus.
- Les spans rapportent la même exécution (l'exécution, chaque appel modèle, chaque appel d'outil
  demandé) avec des compteurs et des statuts, jamais d'arguments ; un vrai modèle est borné par le
  même périmètre d'exécution.

**Pour aller plus loin**

- Dans un terminal : `labkit run complete --stream --json`.
- Lancez dix threads sur un périmètre avec `tool_calls=4, repetitions=3`, qui demandent tous
  `read_ticket(42)` : prédisez d'abord les événements.
- Ensuite : le chapitre 9, l'annulation par l'appelant, et ce qui se passe après un redémarrage."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- « `count` est toujours le nombre d'événements de ce type. » Seulement pour `ModelCall` et
  `ToolCall` (et `Middleware`, qui compte ses observations). Le compte d'un arrêt est le compteur
  que sa règle a lu : `RepeatedCall` compte les tentatives d'une signature, `DeadlineExceeded`
  compte les tentatives d'outil.
- « Un événement `Middleware` veut dire que l'outil s'est exécuté. » Il veut dire que l'appel a
  atteint le middleware, avant la garde ; seul un `ToolCall` dit que la garde l'a admis.
- « Le streaming compte chaque morceau. » Un appel modèle est une tentative, comptée avant son
  premier morceau.
- « Deux appels fautifs dans une même réponse donnent deux arrêts. » Le premier arrêt l'emporte ;
  après lui, plus rien n'est enregistré.
- « Des threads peuvent glisser un appel de plus. » La vérification et la réservation partagent un
  même verrou.

**Pistes de discussion**

- Que journaliseriez-vous de ces événements en production, et que ne faut-il jamais journaliser
  (arguments, signatures) ?
- Qu'est-ce qui changerait si le middleware était le seul endroit où l'on vérifie les permissions ?

</details>"""
