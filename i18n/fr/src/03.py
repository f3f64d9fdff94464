FR = {}
FR["ad080735"] = """# Chapitre 3 — Un cycle complet

**Durée :** environ 30 minutes.

**Prérequis :** les chapitres 1 et 2 (lire un tableau d'événements, la liste des statuts,
`labkit.run`) ; les listes Python.

Une exécution se termine quand le modèle cesse de demander des outils. Cela dit *quand* elle se
termine, pas *comment* : la dernière phrase du modèle n'est qu'une affirmation. Dans ce chapitre,
vous suivez un cycle complet de la revue de ticket, événement par événement, et vous voyez d'où
l'hôte tire le statut.

**Ce que vous saurez faire**

- dire ce qu'exige la tâche de revue, outil par outil ;
- écrire le tableau des événements d'une exécution à partir de son script, avant de l'exécuter ;
- distinguer la fin de la boucle de la fin du travail ;
- écrire le script de votre propre modèle, sous forme de liste d'étapes, et en prédire l'issue."""
FR["284243f4"] = """## La tâche

Deux outils, qui prennent chacun un entier nommé `input` :

| outil | requiert | ce que fait son corps |
|---|---|---|
| `read_ticket` | `ticket.read` | pour 42 : marque le ticket comme lu et renvoie son texte ; tout autre identifiant répond `NotFound` (un résultat, pas une erreur) |
| `finish_review` | `review.finish` | échoue sauf si le ticket 42 a été lu et que `input` vaut 42 ; sinon, marque la revue comme terminée |

La revue ne vit que dans la mémoire de l'hôte : rien n'est écrit ailleurs. La condition hôte est
un attribut de cette mémoire."""
FR["72b5dcf7"] = """## Prédire : un cycle complet, événement par événement

Un modèle scripté est une liste d'étapes : un `labkit.Call` demande un outil, une chaîne de
caractères est une réponse finale, sans appel d'outil. Ce modèle commence par le mauvais ticket,
puis se corrige et fait le travail :"""
FR["events-ask"] = """L'hôte accorde les deux capacités et garde les limites par défaut. Cette fois, prédisez le tableau
des événements en entier, pas seulement le statut. Chaque événement est un triplet
`(kind, name, count)` :

- `("ModelCall", "model", n)` : l'hôte a admis le n-ième appel modèle ;
- `("Middleware", tool, n)` : le middleware a vu passer le n-ième appel d'outil, avant la garde ;
- `("ToolCall", tool, n)` : la garde a admis la n-ième tentative d'outil de l'exécution.

Réfléchissez à ce qui se passe après chaque résultat d'outil, `NotFound` compris : la boucle
s'arrête-t-elle, ou rappelle-t-elle le modèle ?"""
FR["3ebc1312#hint"] = """Chaque résultat d'outil revient au modèle dans un nouvel appel modèle, et la boucle ne se termine que lorsqu'une réponse ne demande aucun outil : comptez les réponses du script. Chaque appel d'outil passe par le middleware avant que la garde ne l'admette."""
FR["same-as-complete"] = """Sans sa première étape, ce script est, étape pour étape, le scénario `complete` de la leçon :"""
FR["cycle-read"] = """Dix événements pour quatre appels modèle : la première demande, puis une relance après chacun des
trois résultats d'outil. `read_ticket(7)` a répondu `NotFound`, un résultat que le modèle a lu et
dont il a tenu compte, pas une erreur : l'exécution a donc continué ; le mauvais ticket a coûté une
tentative d'outil et un appel modèle. La quatrième réponse ne demande aucun outil : la boucle se
termine et l'hôte lit sa condition. Les compteurs numérotent chaque type d'événement séparément,
tous outils confondus : appel modèle 4, tentative d'outil 3. Aucune règle n'a arrêté cette
exécution, le graphique ne met donc aucune ligne en évidence. La barre des tentatives par signature
atteint bien sa limite (1 sur 1 : chaque appel a été fait une fois, avec sa seule tentative
autorisée), mais atteindre une limite, ce n'est pas être refusé par elle : rien n'a demandé de
deuxième tentative."""
FR["bb240f8f"] = """Les résultats d'outil que le modèle a vus, dans l'ordre : la réponse `NotFound`, le texte du ticket,
la confirmation :"""
FR["e03988a8"] = """Et l'état propre de l'hôte, qui est ce qui a décidé du `Completed` :"""
FR["4a2ce502"] = """## Prédire : « c'est fini », dit le modèle

Ce modèle lit le ticket, puis annonce qu'il a terminé :"""
FR["half-ask"] = """Quel statut l'hôte donne-t-il à cette exécution, combien d'événements `ToolCall` enregistre-t-il,
et que dit l'état propre de l'hôte une fois l'exécution terminée : le ticket a-t-il été lu
(`task.read`), la revue a-t-elle été terminée (`task.completed`) ?"""
FR["92cf1617#hint"] = """Lisez la condition hôte après la dernière étape : lequel des deux outils ce script a-t-il appelé, et lequel n'a-t-il pas appelé ? Aucune règle de la garde n'intervient ici."""
FR["364c6a62"] = """Le texte est retenu (`Incomplete` n'est pas un arrêt par l'hôte, il y a donc quelque chose à
montrer), mais son statut dit que ce n'est pas un succès, et la console sort avec le code 2, pas 0.
Une application peut afficher ce texte comme une réponse partielle, poser une question à
l'utilisateur ou confier le ticket à une personne ; elle ne doit pas le présenter comme une revue
terminée.

## Le cas extrême : fini avant d'avoir rien fait

Le scénario `incomplete` de la leçon dit "Review finished." dès son tout premier appel et ne demande
aucun outil. Avec les deux agents :"""
FR["widget-intro"] = """Un appel modèle, aucun appel d'outil, la même phrase que l'exécution exemplaire, et `Incomplete`,
code de sortie 2, avec les deux agents.

## À vous : un script caché

Le panneau ci-dessous montre les étapes d'un script, pas son nom. Choisissez un statut et un nombre
de `ToolCall`, puis appuyez sur le bouton : il exécute le script et vous dit ce qui s'est passé.
(Rien de ce que contient le panneau n'est enregistré avec le notebook.)"""
FR["f933a253"] = """## Auto-vérification"""
FR["11275664"] = """## Explorer

Exécutez `complete` et `incomplete` avec les deux agents et comparez leurs tableaux d'événements,
ligne par ligne. De quelles lignes l'hôte a-t-il besoin pour distinguer les deux exécutions, et
quelles lignes seraient identiques si le modèle avait seulement *dit* qu'il avait lu le ticket ?"""
FR["questions"] = """## Questions

**1.** Écrivez un script dont le texte final dit "I could not finish", mais dont le statut est
`Completed`. Qu'est-ce que cela vous apprend sur la lecture du texte ?

<details><summary>Réponse</summary>

`[labkit.Call("read_ticket", {"input": 42}), labkit.Call("finish_review", {"input": 42}), "I could
not finish."]` se termine en `Completed` : `finish_review` a réussi, donc la condition hôte est
remplie. Le texte est une affirmation du modèle, dans un sens comme dans l'autre ; seul l'état de
l'hôte dit si le travail a été fait.

</details>

**2.** Pourquoi le `NotFound` de `read_ticket(7)` est-il un résultat et non une erreur ?

<details><summary>Réponse</summary>

Le corps a fait son travail : il a cherché le ticket 7 et signale qu'il n'entre pas dans le
champ de la revue. Le modèle reçoit une réponse utile et peut se corriger. Une erreur, c'est pour un corps
qui n'a pas pu faire son travail (comme `finish_review` avant la lecture). Dans les deux cas, la
tentative a été admise et comptée par la garde.

</details>

**3.** Combien d'appels modèle `half_done` fait-il, et pourquoi un de plus que ses appels d'outil ?

<details><summary>Réponse</summary>

Deux. Chaque résultat d'outil est renvoyé au modèle dans un nouvel appel modèle, et l'exécution ne
se termine que sur une réponse qui ne demande aucun outil. Un script séquentiel avec *n* appels
d'outil et une réponse finale fait donc *n* + 1 appels modèle.

</details>

**4.** Écrivez le script qui fait le moins d'appels modèle possible tout en se terminant en
`Completed`. (Une étape peut aussi être une liste d'appels : une seule réponse qui demande plusieurs
outils.) Combien d'appels modèle fait-il, et combien d'événements ?

<details><summary>Réponse</summary>

Deux appels modèle et six événements : `[[labkit.Call("read_ticket", {"input": 42}),
labkit.Call("finish_review", {"input": 42})], "Review finished."]`. La première réponse demande les
deux outils ; la boucle les exécute dans l'ordre de la liste, donc la lecture passe avant la fin de
revue. Un second appel modèle reste nécessaire : la boucle ne se termine que sur une réponse qui ne
demande aucun outil. Les événements sont `ModelCall model 1`, `Middleware read_ticket 1`,
`ToolCall read_ticket 1`, `Middleware finish_review 2`, `ToolCall finish_review 2`,
`ModelCall model 2`.

</details>"""
FR["key-points"] = """## Points clés

- Un cycle complet, c'est appel modèle → appel d'outil → résultat → appel modèle, jusqu'à ce qu'une
  réponse ne demande aucun outil. Un appel d'outil par réponse, cela fait *n* + 1 appels modèle
  pour *n* appels d'outil ; chaque appel admis laisse un événement `Middleware` et un événement
  `ToolCall`.
- Une réponse `NotFound` est un résultat dont le modèle peut tenir compte : l'exécution continue, et
  la tentative compte.
- L'hôte décide du `Completed` d'après son propre état (`finish_review` a réussi). La même phrase,
  "Review finished.", termine l'exécution complète, l'exécution à moitié faite et celle qui n'a
  rien fait.
- `Incomplete` retient le texte et l'étiquette ; le code de sortie 2 dit « pas fini ».

**Pour aller plus loin**

- Dans un terminal : `labkit run incomplete --json`, puis `echo $?`.
- Scriptez `labkit.Call("finish_review", {"input": 42})` en premier, avant toute lecture, et
  prédisez. Le chapitre 4 explique ce que vous voyez.
- Ensuite : le chapitre 4 examine la garde placée autour de chaque corps d'outil."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- « L'exécution s'est terminée, donc la tâche est faite. » La boucle se termine quand une réponse
  ne demande aucun outil ; savoir si la tâche est faite est une autre question, à laquelle l'hôte
  répond d'après son propre état.
- « `Incomplete` est un type d'arrêt, comme `RepeatedCall`. » Aucune règle ne l'a arrêtée : la
  boucle s'est terminée normalement et le texte est retenu, étiqueté comme n'étant pas un succès.
- « Chaque appel d'outil correspond à un appel modèle. » Un appel modèle peut demander plusieurs
  outils (le chapitre 5 montre un lot) ; dans un script séquentiel, c'est le nombre d'appels
  d'outil + 1.
- « `count` est un numéro d'étape global. » Chaque type d'événement a son propre compteur ; l'étape,
  c'est l'index du tableau.

**Pistes de discussion**

- Dans votre produit, où se trouve la « condition hôte » d'une tâche (une ligne en base de données,
  l'état d'un ticket, une PR fusionnée) ? Pourriez-vous la vérifier sans faire confiance au modèle ?
- Que devrait afficher une interface utilisateur pour une exécution `Incomplete` ?

</details>"""
